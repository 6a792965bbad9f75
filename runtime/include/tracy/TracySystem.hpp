// Tracy's thread and system helpers (upstream v0.14.0's tracy:: functions
// that Tracy.hpp declares whether or not TRACY_ENABLE is defined), header-only.
// With tracing on, a thread name (and group hint) goes to the runtime; with
// it off, naming does nothing and the program links nothing of boardtrace.
#ifndef BOARDTRACE_TRACY_SYSTEM_HPP
#define BOARDTRACE_TRACY_SYSTEM_HPP

#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "TracyC.h"
#include <boardtrace/trace.h>

namespace tracy
{

namespace detail
{
inline uint32_t GetThreadHandleImpl()
{
    return (uint32_t)syscall(SYS_gettid);
}
} // namespace detail

inline uint32_t GetThreadHandle()
{
    return detail::GetThreadHandleImpl();
}

#ifdef TRACY_ENABLE
inline void SetThreadName(const char *name)
{
    ___tracy_set_thread_name(name);
}
// The GUI shows the threads of one non-zero groupHint together.
inline void SetThreadNameWithHint(const char *name, int32_t groupHint)
{
    bt_thread_set_name_hint(name, groupHint);
}
#else
inline void SetThreadName(const char *)
{
}
inline void SetThreadNameWithHint(const char *, int32_t)
{
}
#endif

// The name of thread id (of this process): the one set through the API,
// else the system's, else its number. Valid until the calling thread's
// next call.
inline const char *GetThreadName(uint32_t id)
{
    static thread_local char buf[256];
#ifdef TRACY_ENABLE
    if (bt_thread_get_name(id, buf, sizeof buf))
        return buf;
#endif
    snprintf(buf, sizeof buf, "%u", (unsigned)id);
    char path[48];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", (unsigned)id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return buf;
    char name[sizeof buf];
    ssize_t len = read(fd, name, sizeof name - 1);
    close(fd);
    if (len > 0 && name[len - 1] == '\n')
        len--;
    if (len > 0) {
        name[len] = 0;
        snprintf(buf, sizeof buf, "%s", name);
    }
    return buf;
}

inline const char *GetEnvVar(const char *name)
{
    return getenv(name);
}

// The login name ("" if there is none, as for a program without a
// terminal).
inline const char *GetUserLogin()
{
    static thread_local char user[256];
    if (getlogin_r(user, sizeof user) != 0)
        user[0] = 0;
    return user;
}

// The user's full name from /etc/passwd, or nullptr. The file is read
// directly (not through NSS, whose use would make statically linked board
// programs depend on the build machine's glibc at run time).
inline const char *GetUserFullName()
{
    static thread_local char buf[4096];
    static thread_local struct passwd pwd;
    FILE *f = fopen("/etc/passwd", "re");
    if (!f)
        return nullptr;
    const char *name = nullptr;
    struct passwd *entry = nullptr;
    while (fgetpwent_r(f, &pwd, buf, sizeof buf, &entry) == 0)
        if (entry->pw_uid == getuid()) {
            if (entry->pw_gecos && *entry->pw_gecos)
                name = entry->pw_gecos;
            break;
        }
    fclose(f);
    return name;
}

} // namespace tracy

#endif
