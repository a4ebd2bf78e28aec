#include "viz/raster.h"

#ifdef XOPT_WITH_RSVG
#include <cairo.h>
#include <librsvg/rsvg.h>
#endif

#include <cmath>
#include <memory>

namespace xopt::viz {

namespace {

bool ends_with_png(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".png") == 0;
}

}  // namespace

#ifdef XOPT_WITH_RSVG

bool can_rasterize() {
  return true;
}

Result<std::string> svg_to_png(const std::string& svg, double scale) {
  GError* error = nullptr;
  std::unique_ptr<RsvgHandle, void (*)(void*)> handle(
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error),
      g_object_unref);
  if (handle == nullptr) {
    const std::string why = error != nullptr ? error->message : "unknown error";
    if (error != nullptr) g_error_free(error);
    return internal_error("cannot read the SVG to rasterize it: " + why);
  }
  double width = 0, height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.get(), &width, &height) || width <= 0 ||
      height <= 0)
    return internal_error("the SVG has no size in pixels to rasterize at");
  const int w = static_cast<int>(std::lround(width * scale)),
            h = static_cast<int>(std::lround(height * scale));
  std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h), cairo_surface_destroy);
  std::unique_ptr<cairo_t, void (*)(cairo_t*)> cr(cairo_create(surface.get()), cairo_destroy);
  cairo_set_source_rgb(cr.get(), 1, 1, 1);  // an opaque page, like the SVG viewers show
  cairo_paint(cr.get());
  const RsvgRectangle viewport{0, 0, static_cast<double>(w), static_cast<double>(h)};
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &error)) {
    const std::string why = error != nullptr ? error->message : "unknown error";
    if (error != nullptr) g_error_free(error);
    return internal_error("cannot render the SVG: " + why);
  }
  std::string png;
  auto append = [](void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
  };
  if (cairo_surface_write_to_png_stream(surface.get(), append, &png) != CAIRO_STATUS_SUCCESS)
    return internal_error("cannot encode the PNG");
  return png;
}

#else

bool can_rasterize() {
  return false;
}

Result<std::string> svg_to_png(const std::string&, double) {
  return unsupported(
      "PNG output of charts needs librsvg, which this xviz was built without (apt-get install "
      "librsvg2-dev, then configure again); write .svg or .html");
}

#endif

Result<std::string> svg_or_png(const std::string& out_path, std::string svg) {
  if (!ends_with_png(out_path)) return svg;
  return svg_to_png(svg);
}

}  // namespace xopt::viz
