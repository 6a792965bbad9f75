# `cmake --install`: the runtime library, its C and C++ headers (with the generated
# config header), a package config (find_package(boardtrace), linking
# boardtrace::runtime) and a pkg-config file, plus the executables. Board
# captures also go to share/boardtrace/<arch>/, where an installed
# `boardtrace` looks for them relative to itself (the prefix may move).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS bt_runtime EXPORT boardtraceTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES "${PROJECT_BINARY_DIR}/generated/boardtrace/config.h"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/boardtrace)

set(BT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/boardtrace)
install(EXPORT boardtraceTargets NAMESPACE boardtrace:: DESTINATION ${BT_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/boardtraceConfig.cmake.in
    "${PROJECT_BINARY_DIR}/boardtraceConfig.cmake" INSTALL_DESTINATION ${BT_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/boardtraceConfigVersion.cmake"
    COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/boardtraceConfig.cmake"
              "${PROJECT_BINARY_DIR}/boardtraceConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/BoardtraceFunctions.cmake"
        DESTINATION ${BT_INSTALL_CMAKEDIR})

get_property(_bt_install_programs GLOBAL PROPERTY BT_INSTALL_PROGRAMS)
if(_bt_install_programs)
    install(TARGETS ${_bt_install_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The board's capture where the host CLI of the same prefix finds it: from a
# board build itself, and from the board builds a host build made
# (BT_CROSS_TARGETS; the X60 one under its own name).
if(CMAKE_CROSSCOMPILING AND TARGET boardtrace-capture)
    install(PROGRAMS $<TARGET_FILE:boardtrace-capture>
            DESTINATION ${CMAKE_INSTALL_DATADIR}/boardtrace/${BT_TARGET_PROCESSOR})
endif()
if(NOT CMAKE_CROSSCOMPILING AND PROJECT_IS_TOP_LEVEL AND ENABLE_TRACY)
    foreach(arch IN LISTS BT_CROSS_TARGETS)
        install(PROGRAMS "${PROJECT_BINARY_DIR}/cross/${arch}/tools/capture/boardtrace-capture"
                DESTINATION ${CMAKE_INSTALL_DATADIR}/boardtrace/${arch})
        # The Python folder `run --python` uploads, when the board build made
        # the extension for the board's Python (BT_PYTHON_SYSROOT_<arch>).
        install(DIRECTORY "${PROJECT_BINARY_DIR}/cross/${arch}/runtime/python/"
                DESTINATION ${CMAKE_INSTALL_DATADIR}/boardtrace/${arch}/python OPTIONAL
                FILES_MATCHING PATTERN "*.py" PATTERN "_boardtrace.*.so" PATTERN "CMakeFiles" EXCLUDE)
    endforeach()
endif()

# pkg-config: relocatable (paths from the .pc file's own place). A system lz4
# (host builds) is named for the link; one compiled from source is inside
# libboardtrace.a.
if(BT_DEPS_FROM_SOURCE)
    set(BT_PC_LIBS_PRIVATE "")
else()
    set(BT_PC_LIBS_PRIVATE "-llz4")
endif()
file(RELATIVE_PATH BT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/boardtrace.pc.in "${PROJECT_BINARY_DIR}/boardtrace.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/boardtrace.pc"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
