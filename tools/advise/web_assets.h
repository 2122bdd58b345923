// The files of fmte-advise serve's page (tools/advise/web/), compiled into the tool by
// tools/advise/web/embed.cmake: the installed binary needs nothing beside it.
#ifndef FMTE_TOOLS_ADVISE_WEB_ASSETS_H_
#define FMTE_TOOLS_ADVISE_WEB_ASSETS_H_

#include <string_view>

namespace fmte::advise {

struct WebAsset {
  std::string_view path;  // "/index.html"
  std::string_view mime;
  std::string_view content;
};

// nullptr when there is no such file.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace fmte::advise

#endif  // FMTE_TOOLS_ADVISE_WEB_ASSETS_H_
