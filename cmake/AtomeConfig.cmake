# find_package(Atome CONFIG PATHS <atome checkout>/cmake) entry point:
# the same as include(<atome checkout>/cmake/atome.cmake). See atome.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/atome.cmake")
set(Atome_FOUND TRUE)
