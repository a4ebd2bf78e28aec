// JPEG through libjpeg (libjpeg-turbo), decoded as Pillow decodes it: the library's defaults
// (islow DCT, fancy upsampling), YCbCr converted to RGB by libjpeg, grayscale kept gray. A stream
// that ends early is an error (Pillow: "image file is truncated"), where libjpeg would only warn
// and fill the rest with gray; libjpeg's other warnings are ignored, as Pillow ignores them.
//
// libjpeg reports errors by calling error_exit, which must not return: it longjmps back to the
// setjmp in read_header() or read_pixels(). Those two functions hold only trivially destructible
// locals and call only C code after their setjmp, so the jump skips no destructor.
#include "executor/cpu/image/codecs.h"

#if XOPT_HAVE_JPEG

#include <csetjmp>
#include <cstdio>  // jpeglib.h uses FILE and size_t
#include <memory>

#include <jpeglib.h>

#include <jerror.h>  // JWRN_JPEG_EOF

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "JPEG";

struct JpegState {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr err;
  std::jmp_buf jump;
  bool created;
  bool truncated;  // the error was the stream ending early
  char message[JMSG_LENGTH_MAX];
};

JpegState* state_of(j_common_ptr cinfo) {
  // cinfo is the first member of JpegState (a standard-layout struct).
  return reinterpret_cast<JpegState*>(cinfo);
}

void on_error(j_common_ptr cinfo) {
  JpegState* s = state_of(cinfo);
  (*cinfo->err->format_message)(cinfo, s->message);
  std::longjmp(s->jump, 1);
}

// Warnings (level -1) are dropped, except the stream ending early, which is an error here.
void on_message(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    JpegState* s = state_of(cinfo);
    s->truncated = true;
    on_error(cinfo);
  }
}

void on_output(j_common_ptr) {}  // libjpeg never prints

// Reads the header and sets the output colour space. False on error (s->message says why).
bool read_header(JpegState* s, const uint8_t* data, unsigned long size) {
  s->cinfo.err = jpeg_std_error(&s->err);
  s->err.error_exit = on_error;
  s->err.emit_message = on_message;
  s->err.output_message = on_output;
  if (setjmp(s->jump)) return false;
  jpeg_create_decompress(&s->cinfo);
  s->created = true;
  jpeg_mem_src(&s->cinfo, data, size);
  jpeg_read_header(&s->cinfo, TRUE);
  if (s->cinfo.jpeg_color_space == JCS_CMYK || s->cinfo.jpeg_color_space == JCS_YCCK) return true;
  s->cinfo.out_color_space = s->cinfo.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_calc_output_dimensions(&s->cinfo);
  return true;
}

// Decodes every row into `out` (rows of `stride` bytes). False on error.
bool read_pixels(JpegState* s, uint8_t* out, size_t stride) {
  if (setjmp(s->jump)) return false;
  jpeg_start_decompress(&s->cinfo);
  while (s->cinfo.output_scanline < s->cinfo.output_height) {
    JSAMPROW row = out + static_cast<size_t>(s->cinfo.output_scanline) * stride;
    jpeg_read_scanlines(&s->cinfo, &row, 1);
  }
  jpeg_finish_decompress(&s->cinfo);
  return true;
}

struct DestroyJpeg {
  void operator()(JpegState* s) const {
    if (s->created) jpeg_destroy_decompress(&s->cinfo);
    delete s;
  }
};

Status jpeg_error(const JpegState& s) {
  return s.truncated ? truncated(kFormat, s.message) : corrupt(kFormat, s.message);
}

}  // namespace

const bool kJpegBuiltIn = true;

Result<Image> decode_jpeg(Bytes bytes) {
  std::unique_ptr<JpegState, DestroyJpeg> s(new JpegState{});
  if (!read_header(s.get(), bytes.data(), static_cast<unsigned long>(bytes.size())))
    return jpeg_error(*s);
  if (s->cinfo.jpeg_color_space == JCS_CMYK || s->cinfo.jpeg_color_space == JCS_YCCK)
    return variant_unsupported(kFormat, "CMYK colour");
  const int channels = s->cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3;
  XOPT_ASSIGN_OR_RETURN(
      Image img, make_image(kFormat, s->cinfo.output_width, s->cinfo.output_height, channels));
  if (s->cinfo.output_components != channels)
    return corrupt(kFormat, "libjpeg gives " + std::to_string(s->cinfo.output_components) +
                                " components per pixel");
  if (!read_pixels(s.get(), img.pixels.data(), static_cast<size_t>(img.width) * channels))
    return jpeg_error(*s);
  return img;
}

}  // namespace xopt::exec::image::detail

#else  // !XOPT_HAVE_JPEG

namespace xopt::exec::image::detail {

const bool kJpegBuiltIn = false;

Result<Image> decode_jpeg(Bytes) {
  return not_built("JPEG", "libjpeg");
}

}  // namespace xopt::exec::image::detail

#endif
