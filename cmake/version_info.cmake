# Build facts compiled into the binary and stored with every run: the version and build type at configure
# time; the commit at every build (cmake/git_commit.cmake), so that a binary never names a commit it was
# not built from.
set(INFERBENCH_GIT_COMMIT_SOURCE ${PROJECT_BINARY_DIR}/generated/git_commit.cpp)
add_custom_target(inferbench_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${INFERBENCH_GIT_COMMIT_SOURCE}
          -P ${PROJECT_SOURCE_DIR}/cmake/git_commit.cmake
  BYPRODUCTS ${INFERBENCH_GIT_COMMIT_SOURCE}
  VERBATIM)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
