// The few libslurmfull functions the fmte plugins call, declared by hand (Slurm ships no public
// header for them). They are resolved when slurmctld, sbatch or slurmstepd loads the plugin; the
// plugins never link libslurm. See docs/slurm.md §7.2.
//
// Memory rule: every char* handed to Slurm (err_msg, job_desc fields) must come from these
// allocators (xmalloc keeps a header in front of the pointer); free replaced fields with
// SlurmXfree. Thread-safety: the functions are thread-safe in Slurm.
#ifndef FMTE_SLURM_PLUGIN_SLURM_XAPI_H_
#define FMTE_SLURM_PLUGIN_SLURM_XAPI_H_

#include <cstddef>

extern "C" {
void* slurm_xcalloc(size_t cnt, size_t sz, bool clear, bool try_, const char* file, int line,
                    const char* func);
void slurm_xfree(void** p);  // frees *p and sets it to NULL
char* slurm_xstrdup(const char* s);
char* slurm_xstrdup_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slurm_xstrcat(char** s, const char* t);
void slurm_xstrfmtcat(char** s, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void slurm_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slurm_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slurm_verbose(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slurm_debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
}

namespace fmte::slurm {

// Replaces an xmalloc'ed string field with a copy of `value` (NULL when value is null).
inline void ReplaceXstr(char** field, const char* value) {
  if (*field != nullptr) slurm_xfree(reinterpret_cast<void**>(field));
  *field = value != nullptr ? slurm_xstrdup(value) : nullptr;
}

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_SLURM_XAPI_H_
