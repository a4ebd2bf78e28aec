// libxopt.so's own symbol: the version the package was built as (xoptConfigVersion.cmake's).
namespace xopt {

const char* version() {
  return XOPT_VERSION_STRING;
}

}  // namespace xopt
