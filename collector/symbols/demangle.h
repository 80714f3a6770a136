/* C++ names for the reports: kernels come from CUPTI as the compiler mangled them ("_Z10fwd_kernelPfS_i").
 * The collector is C and is not linked with the C++ runtime, so the runtime's demangler is found at run
 * time: the symbol when something linked it in, else libstdc++ opened once on first use. Without it, names
 * stay as they are. */
#ifndef PW_DEMANGLE_H
#define PW_DEMANGLE_H

#include <stddef.h>

/* Writes the demangled form of name into buf (cut to len) and returns 1; returns 0 and leaves buf alone
 * when name is not a mangled C++ name, does not demangle, or no demangler is available. */
int pw_demangle(const char *name, char *buf, size_t len);

/* name shortened to at most width characters for a table cell: a leading "void " and the parameter list
 * ("(...)") dropped, then template arguments elided from the innermost level out ("f<...>"), then the
 * namespaces and classes ("at::native::f" -> "f"), and last the middle cut ("start...end"). Returns name itself when it fits, else buf. */
const char *pw_shorten_name(char *buf, size_t len, const char *name, size_t width);

#endif
