# Exercises the cross toolchain files beyond the presets: a vendor toolchain
# selected by BT_TOOLCHAIN_ROOT/BT_TOOLCHAIN_PREFIX with a BT_SYSROOT (made
# here from Debian's cross compiler under another name), and the SpacemiT X60
# file with the vector extension on and off. Each build compiles the wire
# test and runs it under qemu (with the X60's extensions emulated).
# Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -DDEPS_DIR=... -P check_toolchains.cmake
find_program(DEBIAN_GCC riscv64-linux-gnu-gcc REQUIRED)

include("${CMAKE_CURRENT_LIST_DIR}/run.cmake")

# Configures, builds test_wire and runs it through ctest; returns the cache.
function(build_and_test name toolchain)
    set(dir "${WORK_DIR}/toolchain-${name}")
    file(REMOVE_RECURSE "${dir}")
    run("configuring ${name}" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${dir}" -G Ninja
        "--toolchain=${SOURCE_DIR}/toolchains/${toolchain}" -DENABLE_TRACY=ON
        "-DBT_DEPS_SOURCE_DIR=${DEPS_DIR}" ${ARGN})
    run("building ${name}" ${CMAKE_COMMAND} --build "${dir}" --target test_wire)
    run("testing ${name}" ${CMAKE_CTEST_COMMAND} --test-dir "${dir}" -R "^test_wire$"
        --output-on-failure --no-tests=error)
    file(READ "${dir}/CMakeCache.txt" cache)
    file(READ "${dir}/compile_commands.json" commands)
    set(cache "${cache}" PARENT_SCOPE)
    set(commands "${commands}" PARENT_SCOPE)
    message(STATUS "${name}: configured, built and tested under qemu")
    file(REMOVE_RECURSE "${dir}")
endfunction()

# A vendor toolchain: its own folder, prefix and sysroot.
set(vendor "${WORK_DIR}/vendor-toolchain")
file(REMOVE_RECURSE "${vendor}")
file(MAKE_DIRECTORY "${vendor}/bin" "${vendor}/sysroot/usr")
file(CREATE_LINK "${DEBIAN_GCC}" "${vendor}/bin/riscv64-vendor-linux-gnu-gcc" SYMBOLIC)
file(CREATE_LINK /usr/riscv64-linux-gnu/include "${vendor}/sysroot/usr/include" SYMBOLIC)
file(CREATE_LINK /usr/riscv64-linux-gnu/lib "${vendor}/sysroot/usr/lib" SYMBOLIC)
file(CREATE_LINK usr/lib "${vendor}/sysroot/lib" SYMBOLIC)
build_and_test(vendor riscv64-linux-gnu.cmake "-DBT_TOOLCHAIN_ROOT=${vendor}"
               -DBT_TOOLCHAIN_PREFIX=riscv64-vendor-linux-gnu-
               "-DBT_SYSROOT=${vendor}/sysroot")
if(NOT cache MATCHES "CMAKE_C_COMPILER:[A-Z]+=${vendor}/bin/riscv64-vendor-linux-gnu-gcc")
    message(FATAL_ERROR "the vendor build did not use ${vendor}/bin/riscv64-vendor-linux-gnu-gcc")
endif()
if(NOT commands MATCHES "--sysroot=${vendor}/sysroot")
    message(FATAL_ERROR "the vendor build did not compile with --sysroot=${vendor}/sysroot")
endif()
file(REMOVE_RECURSE "${vendor}")

build_and_test(x60-vector riscv64-spacemit-x60.cmake)
if(NOT commands MATCHES "-march=rv64gcv_zba_zbb_zbs")
    message(FATAL_ERROR "the X60 build did not compile for rv64gcv_zba_zbb_zbs")
endif()
build_and_test(x60-scalar riscv64-spacemit-x60.cmake -DBT_X60_VECTOR=OFF)
if(NOT commands MATCHES "-march=rv64gc_zba_zbb_zbs")
    message(FATAL_ERROR "the X60 build with BT_X60_VECTOR=OFF did not compile for rv64gc_zba_zbb_zbs")
endif()
