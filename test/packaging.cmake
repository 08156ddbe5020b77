# Tests of the Debian package: build it with CPack, check its contents and
# control fields, unpack it into a temporary root and run the packaged binary
# with the packaged config, and verify the systemd unit. Included from
# test/CMakeLists.txt (after the integration_tests target is defined).
set(IBFX_PKG_TEST_DIR ${PROJECT_BINARY_DIR}/package-test)
set(IBFX_PKG_TEST_SH ${CMAKE_CURRENT_LIST_DIR}/packaging_test.sh)

add_test(NAME "package: build the .deb with cpack"
         COMMAND sh ${IBFX_PKG_TEST_SH} build ${PROJECT_BINARY_DIR} ${IBFX_PKG_TEST_DIR})
set_tests_properties("package: build the .deb with cpack" PROPERTIES
  FIXTURES_SETUP ibfx_deb LABELS package TIMEOUT 300
  # Two cpack runs must not share the staging directory.
  RESOURCE_LOCK ibfx_package_dir)

foreach(step contents control check-config unit maintainer-scripts)
  add_test(NAME "package: ${step}"
           COMMAND sh ${IBFX_PKG_TEST_SH} ${step} ${PROJECT_BINARY_DIR} ${IBFX_PKG_TEST_DIR})
  set_tests_properties("package: ${step}" PROPERTIES
    FIXTURES_REQUIRED ibfx_deb LABELS package TIMEOUT 120)
endforeach()

# A real sweep by the unpacked binary on the simulated fabric (a hidden Catch
# test, so the plain integration run does not pick it up without a package).
add_test(NAME "package: packaged binary sweeps the simulated fabric"
         COMMAND integration_tests "[package]")
set_tests_properties("package: packaged binary sweeps the simulated fabric" PROPERTIES
  FIXTURES_REQUIRED ibfx_deb LABELS "package;integration" TIMEOUT 300
  ENVIRONMENT "IBFX_PACKAGE_ROOT=${IBFX_PKG_TEST_DIR}/root")
