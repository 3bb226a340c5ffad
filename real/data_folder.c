// data_folder.c — an ImageNet-style image folder (torchvision's ImageFolder layout):
// root/<class>/<image>.png|.jpg|.jpeg. The class list is the sorted subdirectory names, the
// label of an image is its class's position in that list, and images are listed in name
// order within each class, so every rank and every run sees the same indices. Only names
// are kept in memory; each image is decoded, resized, cropped, flipped and normalised when
// asked for (dt_dataset_get), with the crop and flip drawn from the example's aug seed.
// Not here: decoding (data_decode.c) and the resampling math (data_transform.c).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data.h"
#include "kernels.h"

typedef struct {
    char *root;
    char **classes;    // (num_classes) sorted names
    char *names;       // every file name, NUL-terminated, back to back
    int64_t *name_at;  // (n) offset of example i's name in names
    int resize, crop;
} folder;

// A growable array of strings, for the scan.
typedef struct {
    char **s;
    size_t n, cap;
} strlist;

// realloc that aborts on failure, like mallocCheck
static void *regrow(void *p, size_t bytes) {
    void *q = realloc(p, bytes);
    if (!q) {
        fprintf(stderr, "dtlab: out of memory (%zu bytes) listing files at %s:%d\n", bytes,
                __FILE__, __LINE__);
        exit(DT_EXIT_RUNTIME);
    }
    return q;
}

static void strlist_push(strlist *l, const char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->s = regrow(l->s, l->cap * sizeof(char *));
    }
    size_t len = strlen(s) + 1;
    l->s[l->n] = mallocCheck(len);
    memcpy(l->s[l->n++], s, len);
}
static void strlist_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->s[i]);
    free(l->s);
    l->s = NULL;
    l->n = l->cap = 0;
}
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_image_name(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot && (strcasecmp(dot, ".png") == 0 || strcasecmp(dot, ".jpg") == 0 ||
                   strcasecmp(dot, ".jpeg") == 0);
}

// Sorted names of the entries of dir that are directories (want_dirs) or image files.
static int list_dir(const char *dir, int want_dirs, strlist *out, dt_error *err) {
    DIR *d = opendir(dir);
    if (!d) return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open directory: %s", dir, strerror(errno));
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;  // ".", "..", hidden files
        if (want_dirs) {
            int isdir = e->d_type == DT_DIR;
            if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
                struct stat st;
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                isdir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
            }
            if (isdir) strlist_push(out, e->d_name);
        } else if (is_image_name(e->d_name)) {
            strlist_push(out, e->d_name);
        }
    }
    closedir(d);
    if (out->n) qsort(out->s, out->n, sizeof(char *), cmp_str);  // (NULL, 0) is undefined
    return 0;
}

static uint64_t below(uint64_t r, uint64_t bound) {
    return (uint64_t)(((unsigned __int128)r * bound) >> 64);
}

// x is (3,crop,crop)
static int folder_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                      dt_error *err) {
    const folder *f = ds->impl;
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/%s/%s", f->root, f->classes[ds->labels[index]],
                       f->names + f->name_at[index]);
    if (len < 0 || (size_t)len >= sizeof path) {
        return dt_fail(err, DT_EXIT_USAGE, "%s: path of example %lld longer than %zu bytes",
                       f->root, (long long)index, sizeof path - 1);
    }
    uint8_t *rgb;
    int h, w;
    if (dt_image_decode(path, &rgb, &h, &w, err) != 0) return -1;
    int rh, rw;
    dt_image_resized_size(h, w, f->resize, &rh, &rw);
    int oy = (rh - f->crop) / 2, ox = (rw - f->crop) / 2, flip = 0;  // evaluation: centre
    if (ds->train) {  // training: a uniform window and a fair coin, from the aug seed
        oy = (int)below(dt_mix64(aug_seed ^ 1), (uint64_t)(rh - f->crop + 1));
        ox = (int)below(dt_mix64(aug_seed ^ 2), (uint64_t)(rw - f->crop + 1));
        flip = (int)(dt_mix64(aug_seed ^ 3) >> 63);
    }
    dt_image_transform(rgb, h, w, f->resize, f->crop, oy, ox, flip, ds->mean, ds->std, x);
    free(rgb);
    return 0;
}

static void folder_destroy(dt_dataset *ds) {
    folder *f = ds->impl;
    if (!f) return;
    for (int c = 0; c < ds->num_classes; c++) free(f->classes[c]);
    free(f->classes);
    free(f->names);
    free(f->name_at);
    free(f->root);
    free(f);
    ds->impl = NULL;
}


dt_dataset *dt_dataset_folder(const char *root, const dt_folder_opts *opts, dt_error *err) {
    dt_folder_opts o = opts ? *opts : (dt_folder_opts){0};
    if (o.resize == 0) o.resize = 256;
    if (o.crop == 0) o.crop = 224;
    if (o.crop < 1 || o.resize < o.crop || o.resize > 65536) {
        dt_fail(err, DT_EXIT_USAGE, "image folder %s: resize %d and crop %d, expected "
                "1 <= crop <= resize <= 65536", root ? root : "(null)", o.resize, o.crop);
        return NULL;
    }
    static const float imagenet_mean[3] = DT_IMAGENET_MEAN, imagenet_std[3] = DT_IMAGENET_STD;
    if (o.std[0] == 0.0f && o.std[1] == 0.0f && o.std[2] == 0.0f && o.mean[0] == 0.0f &&
        o.mean[1] == 0.0f && o.mean[2] == 0.0f) {
        memcpy(o.mean, imagenet_mean, sizeof o.mean);
        memcpy(o.std, imagenet_std, sizeof o.std);
    }
    for (int c = 0; c < 3; c++) {
        if (!(o.std[c] > 0.0f)) {
            dt_fail(err, DT_EXIT_USAGE, "image folder %s: std[%d] = %g, expected > 0",
                    root ? root : "(null)", c, (double)o.std[c]);
            return NULL;
        }
    }
    if (!root) {
        dt_fail(err, DT_EXIT_USAGE, "image folder: root directory is NULL");
        return NULL;
    }
    strlist classes = {0}, files = {0};
    if (list_dir(root, 1, &classes, err) != 0) return NULL;
    if (classes.n == 0) {
        dt_fail(err, DT_EXIT_USAGE, "%s: no class subdirectories, expected root/<class>/<image>",
                root);
        strlist_free(&classes);
        return NULL;
    }
    // every class's files, back to back, names in one blob
    size_t n = 0, blob_len = 0, blob_cap = 1 << 16, at_cap = 1024;
    char *blob = mallocCheck(blob_cap);
    int64_t *name_at = mallocCheck(sizeof(int64_t) * at_cap);
    int32_t *labels = mallocCheck(sizeof(int32_t) * at_cap);
    char dir[4096];
    for (size_t c = 0; c < classes.n; c++) {
        snprintf(dir, sizeof dir, "%s/%s", root, classes.s[c]);
        if (list_dir(dir, 0, &files, err) != 0) goto fail;
        if (files.n == 0) {
            dt_fail(err, DT_EXIT_USAGE, "%s: class folder has no .png/.jpg/.jpeg images", dir);
            goto fail;
        }
        for (size_t i = 0; i < files.n; i++) {
            size_t len = strlen(files.s[i]) + 1;
            if (blob_len + len > blob_cap) {
                while (blob_len + len > blob_cap) blob_cap *= 2;
                blob = regrow(blob, blob_cap);
            }
            if (n == at_cap) {
                at_cap *= 2;
                name_at = regrow(name_at, sizeof(int64_t) * at_cap);
                labels = regrow(labels, sizeof(int32_t) * at_cap);
            }
            memcpy(blob + blob_len, files.s[i], len);
            name_at[n] = (int64_t)blob_len;
            labels[n] = (int32_t)c;
            blob_len += len;
            n++;
        }
        strlist_free(&files);
    }
    folder *f = callocCheck(1, sizeof *f);
    f->root = mallocCheck(strlen(root) + 1);
    strcpy(f->root, root);
    f->classes = classes.s;  // ownership moves to f
    f->names = blob;
    f->name_at = name_at;
    f->resize = o.resize;
    f->crop = o.crop;
    dt_dataset *ds = callocCheck(1, sizeof *ds);
    snprintf(ds->name, sizeof ds->name, "folder:%.88s", root);
    ds->n = (int64_t)n;
    ds->c = 3;
    ds->h = ds->w = o.crop;
    ds->num_classes = (int)classes.n;
    ds->train = o.train ? 1 : 0;
    ds->labels = labels;
    memcpy(ds->mean, o.mean, sizeof ds->mean);
    memcpy(ds->std, o.std, sizeof ds->std);
    ds->ops = (dt_dataset_ops){folder_get, folder_destroy};
    ds->impl = f;
    return ds;
fail:
    strlist_free(&files);
    strlist_free(&classes);
    free(blob);
    free(name_at);
    free(labels);
    return NULL;
}
