# Shared part of boardtrace's cross toolchain files; each file sets
# BT_TARGET_TRIPLE, BT_TARGET_PROCESSOR and BT_QEMU before including it.
#
# Cache variables for a vendor toolchain (all optional):
#   BT_TOOLCHAIN_ROOT  folder with bin/<prefix>gcc (default: compilers on PATH,
#                      i.e. Debian's gcc-<triple> packages)
#   BT_TOOLCHAIN_PREFIX compiler prefix (default "<triple>-")
#   BT_SYSROOT         target sysroot (default: Debian's /usr/<triple> if present)
#   BT_QEMU_ARGS       extra qemu user-mode arguments, e.g. "-cpu;rv64,v=true"

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${BT_TARGET_PROCESSOR})

set(BT_TOOLCHAIN_ROOT "" CACHE PATH "Vendor toolchain root holding bin/<prefix>gcc; empty uses the compilers on PATH")
set(BT_TOOLCHAIN_PREFIX "${BT_TARGET_TRIPLE}-" CACHE STRING "Cross compiler prefix")
set(BT_SYSROOT "" CACHE PATH "Target sysroot; empty uses the compiler's own")

# Try-compiles run in a fresh project; hand them the variables above.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
     BT_TOOLCHAIN_ROOT BT_TOOLCHAIN_PREFIX BT_SYSROOT BT_QEMU_ARGS)

if(BT_TOOLCHAIN_ROOT)
    set(_bt_hints HINTS "${BT_TOOLCHAIN_ROOT}/bin" NO_DEFAULT_PATH)
else()
    set(_bt_hints "")
endif()
find_program(CMAKE_C_COMPILER NAMES ${BT_TOOLCHAIN_PREFIX}gcc ${_bt_hints})
find_program(CMAKE_CXX_COMPILER NAMES ${BT_TOOLCHAIN_PREFIX}g++ ${_bt_hints})
if(NOT CMAKE_C_COMPILER)
    message(FATAL_ERROR
        "boardtrace: no ${BT_TOOLCHAIN_PREFIX}gcc found. Install Debian's gcc-${BT_TARGET_TRIPLE} "
        "(tools/setup.sh does) or point -DBT_TOOLCHAIN_ROOT at a vendor toolchain.")
endif()

if(BT_SYSROOT)
    set(CMAKE_SYSROOT "${BT_SYSROOT}")
    set(_bt_qemu_libroot "${BT_SYSROOT}")
elseif(EXISTS "/usr/${BT_TARGET_TRIPLE}")
    set(_bt_qemu_libroot "/usr/${BT_TARGET_TRIPLE}")
endif()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs target binaries through qemu user mode. boardtrace's own binaries
# are static; -L lets dynamically linked ones find the target's libc too.
find_program(BT_QEMU_PROGRAM NAMES ${BT_QEMU}-static ${BT_QEMU})
if(NOT BT_QEMU_PROGRAM)
    message(FATAL_ERROR "boardtrace: ${BT_QEMU}-static not found; install Debian's qemu-user-static (tools/setup.sh does).")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${BT_QEMU_PROGRAM}")
if(_bt_qemu_libroot)
    list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -L "${_bt_qemu_libroot}")
endif()
if(BT_QEMU_ARGS)
    list(APPEND CMAKE_CROSSCOMPILING_EMULATOR ${BT_QEMU_ARGS})
endif()
