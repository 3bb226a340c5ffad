// atomic_file.c — PATH.tmp.<pid>, fsync, rename (see atomic_file.h).
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int dt_atomic_open(dt_atomic_file *a, const char *path, const char *what, dt_error *err) {
    a->f = NULL;
    a->tmp[0] = a->path[0] = '\0';
    if (!path || !*path) return dt_fail(err, DT_EXIT_USAGE, "%s: empty output path", what);
    if (strlen(path) >= sizeof a->path)
        return dt_fail(err, DT_EXIT_USAGE, "%s: output path too long (%zu characters)", what,
                       strlen(path));
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        int e = errno;
        a->tmp[0] = '\0';
        return dt_fail(err, DT_EXIT_USAGE, "%s %.300s: cannot create the file: %s (expected a "
                       "writable path in an existing directory)", what, path, strerror(e));
    }
    return 0;
}

int dt_atomic_finish(dt_atomic_file *a, dt_error *err) {
    int bad = ferror(a->f) || fflush(a->f) != 0 || fsync(fileno(a->f)) != 0;
    int e = errno;
    if (fclose(a->f) != 0 && !bad) bad = 1, e = errno;
    a->f = NULL;
    if (bad) {
        dt_atomic_abort(a);
        return dt_fail(err, DT_EXIT_RUNTIME, "%.300s: write failed: %s", a->path, strerror(e));
    }
    return 0;
}

// Make the directory entry durable too (best effort: not every file system allows it).
static void fsync_parent_dir(const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == path) {
        snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int dt_atomic_commit(dt_atomic_file *a, dt_error *err) {
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        dt_atomic_abort(a);
        return dt_fail(err, DT_EXIT_RUNTIME, "%.300s: cannot rename the temporary file over "
                       "it: %s", a->path, strerror(e));
    }
    a->tmp[0] = '\0';
    fsync_parent_dir(a->path);
    return 0;
}

void dt_atomic_abort(dt_atomic_file *a) {
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp[0]) unlink(a->tmp);
    a->tmp[0] = '\0';
}
