# Cross toolchain for 64-bit ARM Linux boards, Debian's gcc-aarch64-linux-gnu
# by default; see cross-common.cmake for the cache variables that select a
# vendor toolchain and sysroot.
set(BT_TARGET_TRIPLE aarch64-linux-gnu)
set(BT_TARGET_PROCESSOR aarch64)
set(BT_QEMU qemu-aarch64)
# The emulated Debian board of this architecture (tools/board/debian.sh),
# whose Python the extension is built for unless BT_PYTHON_SYSROOT says.
set(BT_DEBIAN_BOARD_ARCH aarch64)
include("${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake")
