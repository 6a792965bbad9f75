# Cross toolchain for 64-bit RISC-V Linux boards (rv64gc, lp64d), Debian's
# gcc-riscv64-linux-gnu by default; see cross-common.cmake for the cache
# variables that select a vendor toolchain and sysroot.
set(BT_TARGET_TRIPLE riscv64-linux-gnu)
set(BT_TARGET_PROCESSOR riscv64)
set(BT_QEMU qemu-riscv64)
# The emulated Debian board of this architecture (tools/board/debian.sh),
# whose Python the extension is built for unless BT_PYTHON_SYSROOT says.
set(BT_DEBIAN_BOARD_ARCH riscv64)
include("${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake")
