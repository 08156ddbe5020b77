# The Debian package (cpack -G DEB, or the `package` target): install rules for
# everything except the binary (installed by the top-level CMakeLists.txt) and
# the CPack DEB settings. Included at the end of the top-level CMakeLists.txt
# (CPack belongs to the top-level project), so paths are spelled from this
# file's directory.
#
# System integration files go to absolute Debian paths (/etc, /lib/systemd,
# /lib/udev): the package prefix is /usr, and a relative sysconfdir under it
# would give /usr/etc. Stage a local install with DESTDIR to avoid writing
# /etc directly.
include(GNUInstallDirs)

set(IBFX_PKG_CONFDIR /etc/ibfabric_exporter)
set(IBFX_PKG_DATADIR ${CMAKE_INSTALL_DATADIR}/ibfabric_exporter)
set(IBFX_PKG_SRC ${CMAKE_CURRENT_LIST_DIR})
set(IBFX_PKG_BIN ${PROJECT_BINARY_DIR}/packaging)

install(FILES ${PROJECT_SOURCE_DIR}/config/ibfabric_exporter.yaml DESTINATION ${IBFX_PKG_CONFDIR})
# The unit and its defaults file are named after the package, as in Debian's
# own exporters (prometheus-node-exporter): what `apt install` names is what
# `systemctl` and /etc/default take.
install(FILES ${IBFX_PKG_SRC}/default DESTINATION /etc/default RENAME ibfabric-exporter)
install(FILES ${IBFX_PKG_SRC}/ibfabric-exporter.service DESTINATION /lib/systemd/system)
# One daemon per subnet: ibfabric-exporter@<name>.service reads
# /etc/ibfabric_exporter/<name>.yaml (README.md, "Several subnets").
install(FILES ${IBFX_PKG_SRC}/ibfabric-exporter@.service DESTINATION /lib/systemd/system)
install(FILES ${IBFX_PKG_SRC}/60-ibfabric-exporter-umad.rules DESTINATION /lib/udev/rules.d)
install(FILES ${IBFX_PKG_SRC}/web-config.yml.example DESTINATION ${IBFX_PKG_DATADIR}/examples)

# Debian policy wants man pages gzip-compressed, reproducibly (-n: no name or
# timestamp in the header).
find_program(IBFX_GZIP gzip REQUIRED)
set(IBFX_MAN_GZ ${IBFX_PKG_BIN}/ibfabric_exporter.1.gz)
add_custom_command(
  OUTPUT ${IBFX_MAN_GZ}
  COMMAND ${IBFX_GZIP} -9n -c ${IBFX_PKG_SRC}/ibfabric_exporter.1 > ${IBFX_MAN_GZ}
  DEPENDS ${IBFX_PKG_SRC}/ibfabric_exporter.1
  VERBATIM)
add_custom_target(ibfx_man_page ALL DEPENDS ${IBFX_MAN_GZ})
install(FILES ${IBFX_MAN_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Dashboards and alerting/recording rules are shipped as data, for an operator
# to import into Grafana and Prometheus. The trailing slash installs the
# directory's contents; OPTIONAL because rules/ may not exist yet.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/ DESTINATION ${IBFX_PKG_DATADIR}/dashboards)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/rules/ DESTINATION ${IBFX_PKG_DATADIR}/rules OPTIONAL)
# Debian names the doc directory after the package (ibfabric-exporter) and
# wants the package's changelog there as changelog.Debian.gz (Policy 12.7).
set(IBFX_CHANGELOG_GZ ${IBFX_PKG_BIN}/changelog.Debian.gz)
add_custom_command(
  OUTPUT ${IBFX_CHANGELOG_GZ}
  COMMAND ${IBFX_GZIP} -9n -c ${IBFX_PKG_SRC}/changelog > ${IBFX_CHANGELOG_GZ}
  DEPENDS ${IBFX_PKG_SRC}/changelog
  VERBATIM)
add_custom_target(ibfx_changelog ALL DEPENDS ${IBFX_CHANGELOG_GZ})
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${IBFX_PKG_SRC}/copyright ${IBFX_CHANGELOG_GZ}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/ibfabric-exporter)

set(CPACK_GENERATOR DEB)
# Debian package names may not contain '_'; the binary, user and paths keep it.
set(CPACK_PACKAGE_NAME ibfabric-exporter)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# The Maintainer field; packagers rebuilding it set their own.
set(IBFX_MAINTAINER "ibfabric_exporter maintainers <maintainers@users.noreply.a-seed-f379631e.example>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${IBFX_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The Debian revision is the one in packaging/changelog, whose upstream part
# must be the project's version (the package test checks it).
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The synopsis line comes from CPACK_PACKAGE_DESCRIPTION_SUMMARY.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "A daemon for the fabric management node that discovers every switch and HCA,
polls the PMA counters of every port with pipelined MADs (libibumad), keeps
them as monotonic 64-bit counters and serves them on /metrics. It runs as the
unprivileged user ibfabric_exporter with access to /dev/infiniband/umad* only.")
# Library dependencies (libibumad3, libibmad5, libibnetdisc5, libssl3,
# libcrypt1, libxxhash0, libyaml-cpp, libstdc++...) come from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# RelWithDebInfo builds carry ~60 MB of debug info the package does not need.
set(CPACK_STRIP_FILES ON)
# rdma-core: its udev/systemd hooks load ib_umad when an HCA appears; without
# it there are usually no /dev/infiniband/umad* devices for the daemon to open.
# adduser: postinst creates the system user.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "rdma-core, adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, infiniband-diags")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# conffiles: dpkg keeps the administrator's edits on upgrade.
configure_file(${IBFX_PKG_SRC}/conffiles ${IBFX_PKG_BIN}/conffiles COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${IBFX_PKG_BIN}/conffiles ${IBFX_PKG_SRC}/postinst
    ${IBFX_PKG_SRC}/prerm ${IBFX_PKG_SRC}/postrm)
include(CPack)
