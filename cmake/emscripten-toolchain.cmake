# The wasm preset's toolchain file: Emscripten's own toolchain file, found from the Emscripten on this machine
# instead of named by one install's path (Debian keeps it in /usr/share/emscripten, emsdk in upstream/emscripten).
# Set ATTNSCOPE_EMSCRIPTEN_ROOT (the folder with emcc.py) to choose another Emscripten.
if(NOT ATTNSCOPE_EMSCRIPTEN_ROOT AND DEFINED ENV{ATTNSCOPE_EMSCRIPTEN_ROOT})
  set(ATTNSCOPE_EMSCRIPTEN_ROOT $ENV{ATTNSCOPE_EMSCRIPTEN_ROOT})
endif()
if(NOT ATTNSCOPE_EMSCRIPTEN_ROOT)
  find_program(ATTNSCOPE_EMXX em++)
  if(ATTNSCOPE_EMXX)
    # em++ is a symlink (Debian: to <root>/wrapper) or a script in the root itself (emsdk).
    file(REAL_PATH ${ATTNSCOPE_EMXX} emxx)
    get_filename_component(root ${emxx} DIRECTORY)
    if(NOT EXISTS ${root}/cmake/Modules/Platform/Emscripten.cmake)
      # Elsewhere (a package manager's wrapper script), Emscripten says where it is itself.
      execute_process(COMMAND em-config EMSCRIPTEN_ROOT OUTPUT_VARIABLE root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    set(ATTNSCOPE_EMSCRIPTEN_ROOT ${root} CACHE PATH "The Emscripten whose toolchain file this build uses")
  endif()
endif()
set(ATTNSCOPE_EMSCRIPTEN_TOOLCHAIN ${ATTNSCOPE_EMSCRIPTEN_ROOT}/cmake/Modules/Platform/Emscripten.cmake)
if(NOT EXISTS ${ATTNSCOPE_EMSCRIPTEN_TOOLCHAIN})
  message(FATAL_ERROR "Emscripten's CMake toolchain file not found (looked for ${ATTNSCOPE_EMSCRIPTEN_TOOLCHAIN}): "
    "put em++ on PATH or set ATTNSCOPE_EMSCRIPTEN_ROOT")
endif()
include(${ATTNSCOPE_EMSCRIPTEN_TOOLCHAIN})
