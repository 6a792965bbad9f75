/* Bringing libraries, host side: a dynamically linked riscv64 and aarch64
 * program (built by the cross compilers) read for its interpreter, needed
 * libraries and symbol versions, resolved in Debian's cross sysroots; a
 * sysroot without the right files or versions refused by name; the board
 * loader's --list output read for what is missing; the ELF reader given
 * every truncation and corruption of a real file. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "btd_elf_dyn.h"
#include "btd_libs.h"
#include "btd_libs_board.h"

static const char *hello_riscv64, *hello_aarch64;

static bool needs(const struct btd_elf_dyn *d, const char *file, const char *version)
{
    for (int i = 0; i < d->needs_count; i++)
        if (strcmp(d->needs[i].file, file) == 0 && strcmp(d->needs[i].version, version) == 0)
            return true;
    return false;
}

static void a_program_names_its_loader_libraries_and_versions(void **state)
{
    (void)state;
    struct btd_elf_dyn *d = malloc(sizeof *d);
    char err[400];
    assert_int_equal(btd_elf_dyn_read(hello_riscv64, d, err, sizeof err), 0);
    assert_true(d->dynamic);
    assert_int_equal(d->machine, 243);
    assert_int_equal(d->bits, 64);
    assert_string_equal(d->interp, "/lib/ld-linux-riscv64-lp64d.so.1");
    assert_int_equal(d->needed_count, 1);
    assert_string_equal(d->needed[0], "libc.so.6");
    /* riscv64's first glibc release: every symbol of it is GLIBC_2.27. */
    assert_true(needs(d, "libc.so.6", "GLIBC_2.27"));

    assert_int_equal(btd_elf_dyn_read("/usr/riscv64-linux-gnu/lib/libc.so.6", d, err, sizeof err),
                     0);
    assert_string_equal(d->soname, "libc.so.6");
    assert_true(btd_elf_dyn_defines(d, "GLIBC_2.27"));
    assert_true(btd_elf_dyn_defines(d, "GLIBC_2.34"));
    assert_false(btd_elf_dyn_defines(d, "GLIBC_9.99"));
    free(d);
}

static void resolve(const char *program, const char *sysroot, struct btd_libs *libs, int want,
                    char *err, size_t errlen)
{
    struct btd_elf_dyn *d = malloc(sizeof *d);
    assert_int_equal(btd_elf_dyn_read(program, d, err, errlen), 0);
    int rc = btd_libs_resolve(program, d, sysroot, libs, err, errlen);
    if (rc != want)
        fprintf(stderr, "resolve %s in %s: %d (%s)\n", program, sysroot, rc, err);
    assert_int_equal(rc, want);
    free(d);
}

static void the_closure_comes_from_each_architectures_sysroot(void **state)
{
    (void)state;
    struct btd_libs *libs = malloc(sizeof *libs);
    char err[600];
    resolve(hello_riscv64, "/usr/riscv64-linux-gnu", libs, 0, err, sizeof err);
    assert_int_equal(libs->count, 2);
    assert_int_equal(libs->loader, 0);
    assert_true(libs->glibc);
    assert_string_equal(libs->libs[0].name, "ld-linux-riscv64-lp64d.so.1");
    assert_string_equal(libs->libs[1].name, "libc.so.6");
    assert_string_equal(libs->libs[1].path, "/usr/riscv64-linux-gnu/lib/libc.so.6");
    assert_int_equal(strlen(libs->libs[1].sha), 64);
    struct stat st;
    assert_int_equal(stat(libs->libs[1].path, &st), 0);
    assert_int_equal(libs->libs[1].size, (uint64_t)st.st_size);

    resolve(hello_aarch64, "/usr/aarch64-linux-gnu", libs, 0, err, sizeof err);
    assert_int_equal(libs->count, 2);
    assert_string_equal(libs->libs[0].name, "ld-linux-aarch64.so.1");
    assert_string_equal(libs->libs[1].name, "libc.so.6");
    assert_string_equal(libs->interp, "/lib/ld-linux-aarch64.so.1");
    free(libs);
}

static void the_default_sysroot_is_the_cross_compilers(void **state)
{
    (void)state;
    char out[4096], err[400];
    unsetenv("BOARDTRACE_SYSROOT");
    assert_int_equal(btd_libs_sysroot("riscv64", NULL, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/usr/riscv64-linux-gnu");
    assert_int_equal(btd_libs_sysroot("aarch64", NULL, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/usr/aarch64-linux-gnu");
    setenv("BOARDTRACE_SYSROOT", "/nonexistent/sysroot", 1);
    assert_int_equal(btd_libs_sysroot("riscv64", NULL, out, sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "BOARDTRACE_SYSROOT=/nonexistent/sysroot: not a folder"));
    assert_int_equal(
        btd_libs_sysroot("riscv64", "/usr/aarch64-linux-gnu", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/usr/aarch64-linux-gnu");
    unsetenv("BOARDTRACE_SYSROOT");
}

static void a_wrong_sysroot_is_refused_by_name(void **state)
{
    (void)state;
    struct btd_libs *libs = malloc(sizeof *libs);
    char err[600];
    /* Files of another machine are not the program's. */
    resolve(hello_riscv64, "/usr/aarch64-linux-gnu", libs, -1, err, sizeof err);
    assert_non_null(strstr(err, "the program's loader /lib/ld-linux-riscv64-lp64d.so.1 is not in "
                                "the sysroot /usr/aarch64-linux-gnu"));

    /* A libc.so.6 that defines none of glibc's versions. */
    char dir[] = "/tmp/bt-sysroot-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char lib[256], path[300];
    snprintf(lib, sizeof lib, "%s/lib", dir);
    assert_int_equal(mkdir(lib, 0700), 0);
    snprintf(path, sizeof path, "%s/ld-linux-riscv64-lp64d.so.1", lib);
    assert_int_equal(symlink("/usr/riscv64-linux-gnu/lib/ld-linux-riscv64-lp64d.so.1", path), 0);
    snprintf(path, sizeof path, "%s/libc.so.6", lib);
    assert_int_equal(symlink("/usr/riscv64-linux-gnu/lib/libgcc_s.so.1", path), 0);
    resolve(hello_riscv64, dir, libs, -1, err, sizeof err);
    assert_non_null(strstr(err, "libc.so.6 in the sysroot "));
    assert_non_null(strstr(err, "lacks version GLIBC_2.27 that the program needs"));

    /* No libc.so.6 at all. */
    assert_int_equal(unlink(path), 0);
    resolve(hello_riscv64, dir, libs, -1, err, sizeof err);
    assert_non_null(strstr(err, "libc.so.6, which the program needs, is not in the sysroot"));
    snprintf(path, sizeof path, "%s/ld-linux-riscv64-lp64d.so.1", lib);
    unlink(path);
    rmdir(lib);
    rmdir(dir);
    free(libs);
}

static void the_board_loaders_listing_names_what_is_missing(void **state)
{
    (void)state;
    struct btd_buf p = {0};
    btd_libs_parse_list("\tlinux-vdso.so.1 (0x0000003f8f2c5000)\n"
                        "\tlibfoo.so.1 => not found\n"
                        "\tlibc.so.6 => /lib/libc.so.6 (0x0000003f8f0d0000)\n"
                        "./prog: /lib/libc.so.6: version `GLIBC_2.38' not found (required by "
                        "./prog)\n",
                        &p);
    assert_string_equal(btd_buf_str(&p), "libfoo.so.1 => not found\n"
                                         "./prog: /lib/libc.so.6: version `GLIBC_2.38' not found "
                                         "(required by ./prog)\n");
    btd_buf_clear(&p);
    btd_libs_parse_list("\t/lib/ld-musl-riscv64.so.1 (0x3f9e0a4000)\n"
                        "Error loading shared library libbar.so: No such file or directory "
                        "(needed by ./prog)\n",
                        &p);
    assert_string_equal(btd_buf_str(&p), "Error loading shared library libbar.so: No such file or "
                                         "directory (needed by ./prog)\n");
    btd_buf_clear(&p);
    btd_libs_parse_list("\tlibc.so.6 => /lib/libc.so.6 (0x0000003f8f0d0000)\n", &p);
    assert_int_equal(p.len, 0);
    btd_buf_free(&p);
}

/* Every prefix of a real program, and single bytes changed through its
 * headers and tables: an error or a result, never a crash (fuzz_elf_dyn
 * goes further under the sanitizers). */
static void cut_or_corrupted_files_are_refused_not_misread(void **state)
{
    (void)state;
    FILE *f = fopen(hello_riscv64, "rb");
    assert_non_null(f);
    static unsigned char data[1 << 20];
    size_t len = fread(data, 1, sizeof data, f);
    fclose(f);
    assert_true(len > 1000 && len < sizeof data);
    struct btd_elf_dyn *d = malloc(sizeof *d);
    char err[400];
    int refused = 0;
    for (size_t n = 0; n < len; n += n < 4096 ? 1 : 97) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, data, n);
        refused += btd_elf_dyn_parse(copy, n, d, err, sizeof err) != 0;
        free(copy);
    }
    assert_true(refused > 0);
    unsigned char *copy = malloc(len);
    for (size_t at = 0; at < 4096 && at < len; at++) {
        memcpy(copy, data, len);
        copy[at] ^= 0xff;
        (void)btd_elf_dyn_parse(copy, len, d, err, sizeof err);
    }
    free(copy);
    free(d);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s HELLO_RISCV64 HELLO_AARCH64\n", argv[0]);
        return 2;
    }
    hello_riscv64 = argv[1];
    hello_aarch64 = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_program_names_its_loader_libraries_and_versions),
        cmocka_unit_test(the_closure_comes_from_each_architectures_sysroot),
        cmocka_unit_test(the_default_sysroot_is_the_cross_compilers),
        cmocka_unit_test(a_wrong_sysroot_is_refused_by_name),
        cmocka_unit_test(the_board_loaders_listing_names_what_is_missing),
        cmocka_unit_test(cut_or_corrupted_files_are_refused_not_misread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
