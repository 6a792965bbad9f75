/* The .tracy file container and payload constants (protocol notes, section
 * 7): magic, compression and stream bytes, 64 KiB blocks, file versions. */
#ifndef BTC_FORMAT_H
#define BTC_FORMAT_H

#include <stdint.h>

#define BTC_FILE_MAGIC_SIZE      4u
#define BTC_FILE_COMPRESS_LZ4    0u
#define BTC_FILE_COMPRESS_ZSTD   1u
#define BTC_FILE_BLOCK_SIZE      65536u
#define BTC_FILE_ZSTD_LEVEL      3
#define BTC_FILE_ZSTD_WINDOW_LOG 19
#define BTC_FILE_HEADER_SIZE     8u    /* "tracy", major, minor, patch */
#define BTC_FILE_NAME_MAX        1024u /* capture name, program, host info: len < this */
#define BTC_FILE_PER_CPU_SLOTS   256u

static const uint8_t btc_file_magic[BTC_FILE_MAGIC_SIZE] = {0x74, 0x72, 0xFD, 0x50};
static const uint8_t btc_file_header[5] = {'t', 'r', 'a', 'c', 'y'};

/* File versions as upstream packs them: major << 16 | minor << 8 | patch. */
#define BTC_FILE_VERSION(maj, min, pat) (((maj) << 16) | ((min) << 8) | (pat))
#define BTC_FILE_VERSION_0_14_0         BTC_FILE_VERSION(0, 14, 0)
#define BTC_FILE_VERSION_0_11_1         BTC_FILE_VERSION(0, 11, 1)
#define BTC_FILE_VERSION_0_10_0         BTC_FILE_VERSION(0, 10, 0)

/* Where the layout changed, as upstream's reader tests it (the versions in
 * between were development versions no release wrote; tools/tracy-versions.md
 * §4): a file of version v has the element when v >= the gate. */
#define BTC_GATE_CONTAINER   BTC_FILE_VERSION(0, 11, 0) /* below: legacy "tZst" container */
#define BTC_GATE_GROUP_HINT  BTC_FILE_VERSION(0, 11, 1) /* thread records' group hint */
#define BTC_GATE_DIES        BTC_FILE_VERSION(0, 11, 2) /* CPU topology's die level */
#define BTC_GATE_WAKEUP_CPU  BTC_FILE_VERSION(0, 11, 3) /* context switches' wakeup CPU */
#define BTC_GATE_NO_DELAY    BTC_FILE_VERSION(0, 12, 3) /* below: the header's i64 delay */
#define BTC_GATE_GPU_NOTES   BTC_FILE_VERSION(0, 12, 4) /* GPU notes, GPU zones' query id */
#define BTC_GATE_MSG_META    BTC_FILE_VERSION(0, 13, 2) /* messages' source and severity */
#define BTC_GATE_SECTIONS    BTC_FILE_VERSION(0, 13, 5) /* sections */
#define BTC_FILE_VERSION_MIN BTC_FILE_VERSION(0, 9, 0)  /* the oldest upstream still reads */

/* The legacy single-stream container of files before 0.11.0. */
static const uint8_t btc_file_magic_legacy_zstd[BTC_FILE_MAGIC_SIZE] = {0x74, 0x5A, 0x73, 0x74};
static const uint8_t btc_file_magic_legacy_lz4[BTC_FILE_MAGIC_SIZE] = {0x74, 0x6C, 0x5A, 0x04};

/* StringRef flags. */
#define BTC_STRREF_IDX    0x01u
#define BTC_STRREF_ACTIVE 0x02u

/* Callstack frame ids: a 62-bit address and two flag bits (notes 8.5). A
 * loader gives the address back with bits 61 and 60 copied to 63 and 62, so
 * only an address whose top two bits repeat the next two survives the trip;
 * upstream's server asserts on any other. */
#define BTC_FRAME_ID_MASK 0x3FFFFFFFFFFFFFFFull

/* Whether a frame id keeps addr whole. */
static inline int btc_frame_id_keeps(uint64_t addr)
{
    return ((addr & 0x3000000000000000ull) << 2) == (addr & 0xC000000000000000ull);
}

/* The address a frame is filed under. One whose top bits are not a sign
 * extension (an arm64 pointer-authentication code, a top-byte tag, RISC-V
 * pointer masking, or an unwinder's garbage) has its top byte made a copy
 * of bit 55 again: its tag goes, the address stays, and every loader reads
 * it back as it was filed. */
static inline uint64_t btc_frame_address(uint64_t addr)
{
    if (btc_frame_id_keeps(addr))
        return addr;
    return (uint64_t)((int64_t)(addr << 8) >> 8);
}

/* The frame id filed for a frame address. */
static inline uint64_t btc_frame_id(uint64_t addr)
{
    return btc_frame_address(addr) & BTC_FRAME_ID_MASK;
}

/* Allocation sizes a loader holds: upstream's asserts on 2^47 and above.
 * (It also sums sizes in a double to draw the memory plot, asserting that
 * the sum never goes below zero: sizes near this bound lose their low bits
 * there, so an impossible size is filed as 0, not as this bound.) */
#define BTC_MEM_SIZE_MAX ((1ull << 47) - 1)

#endif
