// PNG through libpng, decoded as Pillow decodes it and then converts to RGB or L: palettes
// expanded, low bit depths widened to 8 bits, alpha (and tRNS transparency) dropped without
// compositing, no gamma applied. 16-bit samples keep their high byte. Data after the image (a
// missing IEND, say) is not read, as Pillow does not need it either.
//
// libpng reports errors by calling on_error, which longjmps back to the setjmp in read_header()
// or read_pixels(). Those two functions hold only trivially destructible locals and call only C
// code after their setjmp, so the jump skips no destructor.
#include "executor/cpu/image/codecs.h"

#if XOPT_HAVE_PNG

#include <png.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "PNG";

// The most libpng may allocate at once. libpng allocates whatever length an ancillary chunk's
// header claims before reading its data (a 53-byte stream asked for 1.6 GB for an sPLT chunk); its
// own buffers are a few rows (at most 10^6 pixels wide, png_set_user_limits' default) and zlib's
// windows, and the image itself is allocated here, not by libpng. A larger request fails (libpng
// then skips the chunk), and the error message says so.
constexpr png_alloc_size_t kMaxLibpngAllocation = 64 << 20;

struct PngState {
  png_structp png;
  png_infop info;
  const uint8_t* data;
  size_t size;
  size_t pos;
  bool truncated;
  char message[200];
  char warning[200];         // libpng's last warning
  png_alloc_size_t refused;  // the largest allocation refused (over kMaxLibpngAllocation)
};

void on_error(png_structp png, png_const_charp message) {
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::strncpy(s->message, message, sizeof s->message - 1);
  png_longjmp(png, 1);
}

void on_warning(png_structp png, png_const_charp message) {  // libpng never prints
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::strncpy(s->warning, message, sizeof s->warning - 1);
}

png_voidp on_malloc(png_structp png, png_alloc_size_t size) {
  if (size <= kMaxLibpngAllocation) return std::malloc(size);
  auto* s = static_cast<PngState*>(png_get_mem_ptr(png));
  s->refused = std::max(s->refused, size);
  return nullptr;
}
void on_free(png_structp, png_voidp p) {
  std::free(p);
}

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* s = static_cast<PngState*>(png_get_io_ptr(png));
  if (n > s->size - s->pos) {
    s->truncated = true;
    png_error(png, "the stream ends before the image does");
  }
  std::memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

// Reads the header and sets the transformations to 8-bit gray or RGB. False on error.
bool read_header(PngState* s) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_set_read_fn(s->png, s, on_read);
  png_read_info(s->png, s->info);
  const int color = png_get_color_type(s->png, s->info);
  const int depth = png_get_bit_depth(s->png, s->info);
  if (depth == 16) png_set_strip_16(s->png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s->png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s->png);
  if ((color & PNG_COLOR_MASK_ALPHA) != 0) png_set_strip_alpha(s->png);
  png_set_interlace_handling(s->png);
  png_read_update_info(s->png, s->info);
  return true;
}

// Decodes the image into the rows `rows` point at. False on error.
bool read_pixels(PngState* s, png_bytepp rows) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_read_image(s->png, rows);
  return true;
}

struct DestroyPng {
  void operator()(PngState* s) const {
    if (s->png != nullptr) png_destroy_read_struct(&s->png, &s->info, nullptr);
    delete s;
  }
};

Status png_error_status(const PngState& s) {
  std::string message = s.message;
  if (s.warning[0] != '\0') message += std::string(" (after libpng's warning: ") + s.warning + ")";
  if (s.refused != 0)
    message += "; libpng asked for " + std::to_string(s.refused) + " bytes at once, over the " +
               std::to_string(kMaxLibpngAllocation >> 20) + " MiB it may take";
  return s.truncated ? truncated(kFormat, message) : corrupt(kFormat, message);
}

}  // namespace

const bool kPngBuiltIn = true;

Result<Image> decode_png(Bytes bytes) {
  std::unique_ptr<PngState, DestroyPng> s(new PngState{});
  s->data = bytes.data();
  s->size = bytes.size();
  s->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, s.get(), on_error, on_warning, s.get(),
                                    on_malloc, on_free);
  if (s->png == nullptr) return internal_error("libpng could not make a read struct");
  s->info = png_create_info_struct(s->png);
  if (s->info == nullptr) return internal_error("libpng could not make an info struct");
  if (!read_header(s.get())) return png_error_status(*s);
  const int64_t width = png_get_image_width(s->png, s->info);
  const int64_t height = png_get_image_height(s->png, s->info);
  const int channels = png_get_channels(s->png, s->info);
  if (channels != 1 && channels != 3)
    return corrupt(kFormat, "libpng gives " + std::to_string(channels) + " channels");
  // Deflate packs at most 1032 bytes into one, so a stream this short cannot hold this image
  // (each row is a filter byte and at least a bit per pixel): refused before allocating.
  const int64_t raw_row = 1 + (width + 7) / 8;
  if (height > static_cast<int64_t>(bytes.size()) * 1032 / raw_row + 1)
    return truncated(kFormat, "a " + std::to_string(bytes.size()) + "-byte stream cannot hold " +
                                  std::to_string(width) + "x" + std::to_string(height) + " pixels");
  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, width, height, channels));
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(channels);
  if (png_get_rowbytes(s->png, s->info) != stride)
    return corrupt(kFormat, "libpng gives rows of " +
                                std::to_string(png_get_rowbytes(s->png, s->info)) + " bytes");
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (size_t y = 0; y < rows.size(); ++y) rows[y] = img.pixels.data() + y * stride;
  if (!read_pixels(s.get(), rows.data())) return png_error_status(*s);
  return img;
}

}  // namespace xopt::exec::image::detail

#else  // !XOPT_HAVE_PNG

namespace xopt::exec::image::detail {

const bool kPngBuiltIn = false;

Result<Image> decode_png(Bytes) {
  return not_built("PNG", "libpng");
}

}  // namespace xopt::exec::image::detail

#endif
