// Catch2's main, in its own file so the slow-to-compile runner is built once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
