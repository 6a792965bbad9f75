# The host's other Pythons, for whom the extension is built besides the one
# CMake found (each into its own folder, with test_python_3.X run on it and
# bench_python_3.X measuring it):
# BT_PYTHON_EXTRA_INTERPRETERS, filled on the first configure with one
# interpreter per other 3.X from 3.11 on (before, code objects have no
# co_qualname: a method's zone is "area", not "Shape.area", and
# test_python's counts do not hold) that runs and has its headers:
# python3.X on PATH first, then pyenv's versions.

# Runs INTERP and sets OUT to "3.X;INCLUDE_DIR;EXT_SUFFIX", or "" when it
# does not run.
function(bt_python_probe interp out)
    execute_process(
        COMMAND "${interp}" -c "import sys, sysconfig; print('%d.%d;%s;%s' % (sys.version_info[0], sys.version_info[1], sysconfig.get_paths()['include'], sysconfig.get_config_var('EXT_SUFFIX')))"
        RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0 OR NOT text MATCHES "^3\\.[0-9]+;.+;.+$")
        set(text "")
    endif()
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(bt_python_find_interpreters out main_version)
    set(candidates "")
    foreach(minor RANGE 11 30)
        find_program(_bt_py_3_${minor} python3.${minor} NO_CACHE)
        if(_bt_py_3_${minor})
            list(APPEND candidates "${_bt_py_3_${minor}}")
        endif()
    endforeach()
    set(pyenv "$ENV{PYENV_ROOT}")
    if(NOT pyenv)
        set(pyenv "$ENV{HOME}/.pyenv")
    endif()
    file(GLOB pyenv_pythons "${pyenv}/versions/3.*/bin/python3")
    list(SORT pyenv_pythons COMPARE NATURAL ORDER DESCENDING)
    list(APPEND candidates ${pyenv_pythons})
    set(found "")
    set(seen "${main_version}")
    foreach(interp IN LISTS candidates)
        bt_python_probe("${interp}" probe)
        if(NOT probe)
            continue() # pyenv's shim of a version not selected, for one
        endif()
        list(GET probe 0 version)
        list(GET probe 1 include)
        string(REGEX REPLACE "^3\\." "" minor "${version}")
        if(minor LESS 11 OR version IN_LIST seen OR NOT EXISTS "${include}/Python.h")
            continue()
        endif()
        list(APPEND seen "${version}")
        list(APPEND found "${interp}")
    endforeach()
    set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED BT_PYTHON_EXTRA_INTERPRETERS)
    bt_python_find_interpreters(_bt_extra "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
    set(BT_PYTHON_EXTRA_INTERPRETERS "${_bt_extra}" CACHE STRING
        "Other Python interpreters to build the extension for (and run test_python on); empty: none")
endif()

foreach(interp IN LISTS BT_PYTHON_EXTRA_INTERPRETERS)
    bt_python_probe("${interp}" probe)
    if(NOT probe)
        message(FATAL_ERROR "boardtrace: BT_PYTHON_EXTRA_INTERPRETERS names ${interp}, which does not "
                            "run; give the interpreters to build for (or \"\" for none)")
    endif()
    list(GET probe 0 version)
    list(GET probe 1 include)
    list(GET probe 2 suffix)
    if(NOT EXISTS "${include}/Python.h")
        message(FATAL_ERROR "boardtrace: BT_PYTHON_EXTRA_INTERPRETERS names ${interp} (Python ${version}), "
                            "which has no ${include}/Python.h: install its headers or leave it out")
    endif()
    if(TARGET bt_python_${version})
        message(FATAL_ERROR "boardtrace: BT_PYTHON_EXTRA_INTERPRETERS names Python ${version} twice")
    endif()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/${version}")
    add_library(bt_python_${version} MODULE ${_bt_python_sources})
    target_include_directories(bt_python_${version} SYSTEM PRIVATE "${include}")
    set_target_properties(bt_python_${version} PROPERTIES PREFIX "" SUFFIX "${suffix}")
    bt_python_extension(bt_python_${version} "${dir}")
    bt_python_packages("${dir}")
    message(STATUS "boardtrace: the Python extension for ${interp} (${version}) too, in ${dir}")
    if(BT_BUILD_TESTS AND TARGET boardtrace-capture AND TARGET boardtrace-report)
        add_test(NAME test_python_${version}
                 COMMAND ${interp} ${PROJECT_SOURCE_DIR}/tests/integration/python/test_python.py
                         ${dir} $<TARGET_FILE:boardtrace-capture> $<TARGET_FILE:boardtrace-report>)
        set_tests_properties(test_python_${version} PROPERTIES LABELS integration TIMEOUT 600)
    endif()
    if(BT_BUILD_TESTS AND TARGET boardtrace-capture)
        add_test(NAME bench_python_${version}
                 COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/bench_python.py --python ${interp}
                         ${dir} $<TARGET_FILE:boardtrace-capture>)
        set_tests_properties(bench_python_${version} PROPERTIES LABELS bench TIMEOUT 1200 RUN_SERIAL ON)
    endif()
endforeach()
