# `cmake --install`: the runtime library, its headers (with the generated
# config header) and a package config, so other projects can
# find_package(boardtrace) and link boardtrace::runtime; plus the executables.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS bt_runtime EXPORT boardtraceTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
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
