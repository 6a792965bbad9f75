# Host builds can build the board builds too: BT_CROSS_TARGETS=riscv64;aarch64
# configures and builds each as a sub-build in <build>/cross/<arch> with the
# same options, and registers its test suite (run under qemu) as one ctest
# test labelled "cross". The CLI finds the board's capture there.
set(BT_CROSS_TARGETS "" CACHE STRING "Board builds to build along with the host build (riscv64, riscv64-x60, aarch64)")

if(BT_CROSS_TARGETS AND NOT CMAKE_CROSSCOMPILING)
    include(ExternalProject)
    set(_bt_toolchain_riscv64 riscv64-linux-gnu.cmake)
    set(_bt_toolchain_riscv64-x60 riscv64-spacemit-x60.cmake)
    set(_bt_toolchain_aarch64 aarch64-linux-gnu.cmake)
    foreach(arch IN LISTS BT_CROSS_TARGETS)
        if(NOT DEFINED _bt_toolchain_${arch})
            message(FATAL_ERROR
                "boardtrace: BT_CROSS_TARGETS names '${arch}': allowed are riscv64, riscv64-x60, aarch64.")
        endif()
        set(dir "${PROJECT_BINARY_DIR}/cross/${arch}")
        # The board's Python headers, for the extension `run --python`
        # uploads (runtime/python): BT_PYTHON_SYSROOT_<arch>, else the
        # sub-build takes the Debian test board's (runtime/python/CMakeLists.txt).
        set(BT_PYTHON_SYSROOT_${arch} "" CACHE PATH
            "The ${arch} board's Python headers (a folder with usr/include/python3.X) for its Python extension")
        ExternalProject_Add(bt_cross_${arch}
            SOURCE_DIR "${PROJECT_SOURCE_DIR}"
            BINARY_DIR "${dir}"
            CMAKE_GENERATOR Ninja
            CMAKE_ARGS
                "--toolchain=${PROJECT_SOURCE_DIR}/toolchains/${_bt_toolchain_${arch}}"
                "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}"
                "-DENABLE_TRACY=${ENABLE_TRACY}"
                "-DRUNTIME_TRACING=${RUNTIME_TRACING}"
                "-DTRACING_MODE=${TRACING_MODE}"
                "-DNO_POINTER_COMPRESSION=${NO_POINTER_COMPRESSION}"
                "-DTRACING_CALLSTACK_DEPTH=${TRACING_CALLSTACK_DEPTH}"
                "-DCODE_TRANSFER=${CODE_TRANSFER}"
                "-DBT_WERROR=${BT_WERROR}"
                "-DBT_DEPS_SOURCE_DIR=${BT_DEPS_SOURCE_DIR}"
                "-DBUILD_TESTING=${BUILD_TESTING}"
                "-DBT_PYTHON_SYSROOT=${BT_PYTHON_SYSROOT_${arch}}"
            INSTALL_COMMAND ""
            # bt_cross_<arch>-configure alone: tools/demo.sh then builds only
            # the board's capture and demo in it.
            STEP_TARGETS configure
            BUILD_ALWAYS ON
            USES_TERMINAL_BUILD ON)
        if(BUILD_TESTING)
            add_test(NAME cross-${arch}-tests
                     COMMAND ${CMAKE_CTEST_COMMAND} --test-dir "${dir}" --output-on-failure
                             --no-tests=error -LE "bench|fuzz")
            set_tests_properties(cross-${arch}-tests PROPERTIES LABELS "cross" TIMEOUT 1800)
        endif()
    endforeach()
endif()

# A plain host build with tracing on makes the boardtrace CLI but no capture
# for any board, and `boardtrace run` needs one: say so once, with the way.
if(NOT CMAKE_CROSSCOMPILING AND NOT BT_CROSS_TARGETS AND ENABLE_TRACY AND BOARDTRACE_BUILD_TOOLS)
    message(NOTICE
        "boardtrace: this host build makes no board capture, which `boardtrace run` uploads; "
        "add -DBT_CROSS_TARGETS=riscv64 (or aarch64, or both: \"riscv64;aarch64\") to build "
        "the boards' captures along (installed beside the CLI), or give `run --capture PATH`.")
endif()
