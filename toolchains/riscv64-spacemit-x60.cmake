# Cross toolchain for boards with SpacemiT's X60 cores (K1/M1 SoCs, e.g. the
# Banana Pi BPI-F3): RVV 1.0 with VLEN 256 and the Zba/Zbb/Zbs bit-manipulation
# extensions. Vector code is on by default. Unaligned vector accesses have
# caused bus errors on that board; -DBT_X60_VECTOR=OFF builds for
# rv64gc + bitmanip instead, with no vector instructions at all.
set(BT_TARGET_TRIPLE riscv64-linux-gnu)
set(BT_TARGET_PROCESSOR riscv64)
set(BT_QEMU qemu-riscv64)

set(BT_X60_VECTOR ON CACHE BOOL "Use the RISC-V vector extension (RVV 1.0); OFF = rv64gc + Zba/Zbb/Zbs")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BT_X60_VECTOR)
if(BT_X60_VECTOR)
    set(_bt_x60_march rv64gcv_zba_zbb_zbs)
    set(_bt_x60_cpu "rv64,v=true,vext_spec=v1.0,vlen=256,elen=64,zba=true,zbb=true,zbs=true")
else()
    set(_bt_x60_march rv64gc_zba_zbb_zbs)
    set(_bt_x60_cpu "rv64,zba=true,zbb=true,zbs=true")
endif()
set(CMAKE_C_FLAGS_INIT "-march=${_bt_x60_march} -mabi=lp64d")
set(CMAKE_CXX_FLAGS_INIT "-march=${_bt_x60_march} -mabi=lp64d")
# qemu emulates the same extensions so ctest exercises the code the board runs.
if(NOT BT_QEMU_ARGS)
    set(BT_QEMU_ARGS -cpu "${_bt_x60_cpu}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake")
