// ModelCatalog: the config.json files under etc/models/<org>/<name>/, looked up case-insensitively,
// with "did you mean" suggestions by edit distance; ResolveModel: catalog id, else a path.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "fmte/file.h"
#include "fmte/model.h"
#include "fmte/text.h"

namespace fmte {
namespace {

std::string_view NamePart(std::string_view id) {
  size_t slash = id.rfind('/');
  return slash == std::string_view::npos ? id : id.substr(slash + 1);
}

}  // namespace

Result<ModelCatalog> ModelCatalog::LoadDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::NotFound("model catalog directory '" + dir + "' does not exist");
  }
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec);
  if (ec) return Status::IoError("cannot list model catalog '" + dir + "': " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IoError("cannot list model catalog '" + dir + "': " + ec.message());
    if (it->path().filename() == "config.json" && it->is_regular_file(ec)) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  ModelCatalog catalog;
  for (const fs::path& file : files) {
    // The folders below `dir` as listed (lexically: no path resolution per model, and a folder
    // reached through a symbolic link keeps the name it has in the catalog).
    std::string id = file.parent_path().lexically_relative(dir).generic_string();
    if (id.empty() || id == ".") {
      return Status::ParseError("model catalog: '" + file.string() +
                                "' must be stored as <org>/<name>/config.json");
    }
    Result<ModelArch> arch = LoadModelConfigFile(file.string());
    if (!arch.ok()) return arch.status().WithContext("model catalog");
    arch->id = id;
    catalog.Add(std::move(arch).value());
  }
  const fs::path aliases = fs::path(dir) / "aliases.tsv";
  if (fs::exists(aliases, ec)) {
    Result<std::string> text = ReadFile(aliases.string(), "the model aliases", 1 << 20);
    if (!text.ok()) return text.status();
    int line_no = 0;
    for (std::string_view rest = *text; !rest.empty();) {
      const size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty() || line.front() == '#') continue;
      const size_t tab = line.find('\t');
      const size_t tab2 = tab == std::string_view::npos ? tab : line.find('\t', tab + 1);
      if (tab == std::string_view::npos || tab == 0)
        return FileParseError(aliases.string(), line_no, "expected alias<TAB>catalog id<TAB>why");
      const Status s = catalog.AddAlias(line.substr(0, tab), line.substr(tab + 1, tab2 - tab - 1));
      if (!s.ok()) return FileParseError(aliases.string(), line_no, s.message());
    }
  }
  return catalog;
}

Status ModelCatalog::AddAlias(std::string_view alias, std::string_view id) {
  const std::string a = Lower(alias), target = Lower(id);
  if (a.empty() || target.empty()) return Status::InvalidArgument("empty alias or catalog id");
  if (models_.count(a) != 0)
    return Status::InvalidArgument("'" + std::string(alias) + "' is a catalog model, not an alias");
  if (models_.count(target) == 0)
    return Status::InvalidArgument("'" + std::string(id) + "' is not a catalog model");
  aliases_.insert_or_assign(a, target);
  return Status::Ok();
}

std::string ModelCatalog::DefaultDir() { return EtcDir() + "/models"; }

Result<const ModelArch*> ModelCatalog::Find(std::string_view id) const {
  const std::string key = Lower(id);
  auto it = models_.find(key);
  if (it != models_.end()) return &it->second;
  if (auto alias = aliases_.find(key); alias != aliases_.end()) {
    it = models_.find(alias->second);
    if (it != models_.end()) return &it->second;
  }
  // A local path whose last two components are a catalog id is that model's copy: litgpt keeps
  // checkpoints in checkpoints/<org>/<name> (litgpt download), and sites mirror the hub's layout
  // (/models/<org>/<name>). Only paths of three or more components: "org/name" itself is an id.
  std::string_view path = key;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const size_t last = path.rfind('/');
  const size_t org = last == std::string_view::npos || last == 0 ? std::string_view::npos
                                                                 : path.rfind('/', last - 1);
  if (org != std::string_view::npos && last + 1 < path.size()) {
    const std::string tail(path.substr(org + 1));
    it = models_.find(tail);
    if (it == models_.end())
      if (auto alias = aliases_.find(tail); alias != aliases_.end())
        it = models_.find(alias->second);
    if (it != models_.end()) return &it->second;
  }
  // A bare name (litgpt's model_name "pragna-1b", a hub id written without its organisation) that
  // names exactly one catalog model.
  if (key.find('/') == std::string::npos && !key.empty()) {
    const ModelArch* only = nullptr;
    int matches = 0;
    for (const auto& [k, arch] : models_)
      if (NamePart(k) == key && ++matches == 1) only = &arch;
    if (matches == 1) return only;
  }
  std::string msg = "unknown model '" + std::string(id) + "'";
  std::vector<std::string> closest = Closest(id);
  if (!closest.empty()) {
    msg += "; closest catalog ids: ";
    for (size_t i = 0; i < closest.size(); ++i) msg += (i ? ", " : "") + closest[i];
  }
  return Status::NotFound(msg);
}

namespace {

// A name with '-', '_' and '.' as one separator, lower case ("InternVL2_5-8B" -> "internvl2-5-8b").
std::string SeparatorsAlike(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) out += (c == '_' || c == '.') ? '-' : LowerAscii(c);
  return out;
}

// Whether a remainder's first word names another size of the same family: "xl", "560m", "7b",
// "large" (gpt2-xl is not gpt2).
bool StartsWithSize(std::string_view rest) {
  const std::string_view word = rest.substr(0, rest.find('-'));
  static constexpr std::string_view kSizes[] = {"small", "medium", "large", "xl",
                                                "xxl",   "mini",   "tiny",  "huge"};
  for (std::string_view s : kSizes)
    if (word == s) return true;
  size_t digits = 0;
  while (digits < word.size() && (std::isdigit(static_cast<unsigned char>(word[digits])) ||
                                  (digits > 0 && word[digits] == 'x')))
    ++digits;
  return digits > 0 && digits + 1 == word.size() &&
         (word.back() == 'b' || word.back() == 'm' || word.back() == 'k' || word.back() == 't');
}

}  // namespace

Result<const ModelArch*> ModelCatalog::NamedAfter(std::string_view path) const {
  // Local paths only: a Hugging Face id ("org/name") names a model whose own config the client
  // reads from the cache or the hub.
  const bool local = path.starts_with('/') || path.starts_with('.') || path.starts_with('~') ||
                     std::count(path.begin(), path.end(), '/') >= 2;
  if (!local) return Status::NotFound("'" + std::string(path.substr(0, 512)) + "' is no path");
  std::string_view tail = path.substr(0, 512);
  while (!tail.empty() && tail.back() == '/') tail.remove_suffix(1);
  if (const size_t slash = tail.rfind('/'); slash != std::string_view::npos)
    tail.remove_prefix(slash + 1);
  const std::string name = SeparatorsAlike(tail);
  const std::string* best = nullptr;
  size_t best_len = 0;
  auto consider = [&](const std::string& id, const std::string& target) {
    const std::string known = SeparatorsAlike(NamePart(id));
    if (known.size() <= best_len || known.size() + 1 >= name.size() || !name.starts_with(known) ||
        name[known.size()] != '-' ||
        StartsWithSize(std::string_view(name).substr(known.size() + 1)))
      return;
    best = &target;
    best_len = known.size();
  };
  for (const auto& [id, arch] : models_) consider(id, id);
  for (const auto& [alias, id] : aliases_) consider(alias, id);
  if (best != nullptr)
    if (auto it = models_.find(*best); it != models_.end()) return &it->second;
  return Status::NotFound("'" + std::string(tail) + "' is named after no catalog model");
}

std::vector<std::string> ModelCatalog::Closest(std::string_view id, size_t n) const {
  // Hugging Face ids are at most 96 characters; a longer query is compared by its first 128, so a
  // hostile #FMTE value costs the controller no more than a long real id.
  constexpr size_t kMaxQuery = 128;
  std::string query = Lower(id.substr(0, kMaxQuery));
  bool has_org = query.find('/') != std::string::npos;
  std::string_view query_name = NamePart(query);
  // Names the query is a prefix of come first ("Llama-2-7b" -> "Llama-2-7b-hf"), then names that
  // contain it, then the rest; within a tier, by edit distance on the name, then on the whole id.
  // The rest are offered only within kFar edits of the name: a name further away is no suggestion.
  constexpr size_t kFar = 16;
  struct Scored {
    int tier;
    size_t name_distance, id_distance;
    std::string id;
  };
  auto before = [](const Scored& a, const Scored& b) {
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.name_distance != b.name_distance) return a.name_distance < b.name_distance;
    if (a.id_distance != b.id_distance) return a.id_distance < b.id_distance;
    return a.id < b.id;
  };
  // The n best so far, in order. Once there are n, a candidate's distances are computed only as
  // far as they could still place it before the last (EditDistance's limit): the catalog's other
  // names cost a few rows each instead of a full table.
  if (n == 0) return {};
  std::vector<Scored> best;
  for (const auto& [key, arch] : models_) {
    std::string_view name = NamePart(key);
    int tier = name.substr(0, query_name.size()) == query_name   ? 0
               : name.find(query_name) != std::string_view::npos ? 1
                                                                 : 2;
    if (query_name.empty()) tier = 2;
    const Scored* worst = best.size() >= n ? &best.back() : nullptr;
    if (worst != nullptr && tier > worst->tier) continue;
    const bool same_tier = worst != nullptr && tier == worst->tier;
    size_t name_limit = same_tier ? worst->name_distance + 1 : SIZE_MAX;
    if (tier == 2) name_limit = std::min(name_limit, kFar + 1);
    const size_t d_name = EditDistance(query_name, name, name_limit);
    if (d_name >= name_limit) continue;
    const size_t id_limit =
        same_tier && d_name == worst->name_distance ? worst->id_distance + 1 : SIZE_MAX;
    const size_t d_id = has_org ? EditDistance(query, key, id_limit) : d_name;
    if (d_id >= id_limit) continue;
    Scored candidate{tier, d_name, d_id, arch.id};
    if (worst != nullptr && !before(candidate, *worst)) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), candidate, before),
                std::move(candidate));
    if (best.size() > n) best.pop_back();
  }
  std::vector<std::string> out;
  for (Scored& s : best) out.push_back(std::move(s.id));
  return out;
}

std::vector<std::string> ModelCatalog::Ids() const {
  std::vector<std::string> ids;
  for (const auto& [key, arch] : models_) ids.push_back(arch.id);
  return ids;
}

void ModelCatalog::Add(ModelArch arch) {
  std::string key = Lower(arch.id);
  models_.insert_or_assign(std::move(key), std::move(arch));
}

Result<ModelArch> ResolveModel(const ModelCatalog& catalog, std::string_view id_or_path) {
  Result<const ModelArch*> found = catalog.Find(id_or_path);
  if (found.ok()) return **found;
  std::error_code ec;
  std::string path(id_or_path);
  if (!path.empty() && std::filesystem::exists(path, ec)) return LoadModelConfigFile(path);
  return Status::NotFound(found.status().message() +
                          " (and no config.json file or model directory of that name exists)");
}

}  // namespace fmte
