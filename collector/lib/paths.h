/* The absolute path a program named by a path as it wrote it, worked out lexically (no file system access: the
 * files may be gone, or on another host, when the report is made). */
#ifndef PW_PATHS_H
#define PW_PATHS_H

#include <stddef.h>

/* Writes into out (size bytes, NUL-terminated) the absolute path that path (len bytes; a NUL ends it early)
 * names, taken relative to the directory dir (dir_len bytes) when it is relative: "." components and repeated
 * or trailing slashes left out, and ".." with the component before it where that component cannot be a
 * symlink: the root, or a component of dir when dir_physical says that dir is a name the kernel gave (getcwd,
 * /proc/self/fd), which has none. Elsewhere ".." stays: the component before it may be a symlink, whose ".."
 * is another directory. Returns the length, or 0 when the result does not fit, or when path is relative and
 * dir is NULL or not absolute. */
size_t pw_path_resolve(const char *dir, size_t dir_len, int dir_physical, const char *path, size_t len, char *out,
		       size_t size);

#endif
