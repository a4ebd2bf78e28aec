// JPEG 2000 (a JP2 file or a bare J2K codestream) through libopenjp2, at full resolution with
// every quality layer, as Pillow decodes it: 1 component is gray, 3 are RGB, a 2nd or 4th
// (alpha) is dropped; samples of other precisions are shifted to 8 bits, signed ones offset
// first. Subsampled components and sYCC colour are refused. The image size is checked from the
// header before anything is decoded.
#include "executor/cpu/image/codecs.h"

#if XOPT_HAVE_OPENJPEG

#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "JPEG 2000";

struct Source {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos;
  bool ran_out;  // a read found nothing left
  char message[512];
};

OPJ_SIZE_T on_read(void* buf, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (s->pos >= s->size) {
    s->ran_out = true;
    return static_cast<OPJ_SIZE_T>(-1);
  }
  const uint64_t k = std::min<uint64_t>(s->size - s->pos, n);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<OPJ_SIZE_T>(k);
}

OPJ_OFF_T on_skip(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (n < 0) {
    if (static_cast<uint64_t>(-n) > s->pos) return -1;
  } else if (static_cast<uint64_t>(n) > s->size - std::min(s->pos, s->size)) {
    n = static_cast<OPJ_OFF_T>(s->size - std::min(s->pos, s->size));
  }
  s->pos = static_cast<uint64_t>(static_cast<int64_t>(s->pos) + n);
  return n;
}

OPJ_BOOL on_seek(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (n < 0 || static_cast<uint64_t>(n) > s->size) return OPJ_FALSE;
  s->pos = static_cast<uint64_t>(n);
  return OPJ_TRUE;
}

void on_error(const char* message, void* user) {
  auto* s = static_cast<Source*>(user);
  if (s->message[0] != '\0') return;  // the first error says most
  std::strncpy(s->message, message, sizeof s->message - 1);
  // openjpeg's messages end in a newline.
  const size_t n = std::strlen(s->message);
  if (n > 0 && s->message[n - 1] == '\n') s->message[n - 1] = '\0';
}

void on_quiet(const char*, void*) {}

struct DestroyCodec {
  void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
};
struct DestroyStream {
  void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
};
struct DestroyImage {
  void operator()(opj_image_t* i) const { opj_image_destroy(i); }
};

Status decode_error(const Source& s, const char* fallback) {
  if (s.ran_out) return truncated(kFormat, s.message[0] != '\0' ? s.message : fallback);
  return corrupt(kFormat, s.message[0] != '\0' ? s.message : fallback);
}

// One sample at 8 bits, as Pillow shifts it.
uint8_t to_8_bits(const opj_image_comp_t& c, size_t i) {
  int64_t v = c.data[i];
  if (c.sgnd) v += int64_t{1} << (c.prec - 1);
  if (c.prec > 8) v >>= (c.prec - 8);
  if (c.prec < 8) v <<= (8 - c.prec);
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

}  // namespace

const bool kJpeg2000BuiltIn = true;

Result<Image> decode_jpeg2000(Bytes bytes) {
  Source src{bytes.data(), bytes.size(), 0, false, {0}};
  const bool jp2 = bytes[0] == 0;  // a JP2 signature box; else a J2K codestream (FF 4F)
  std::unique_ptr<opj_codec_t, DestroyCodec> codec(
      opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
  if (codec == nullptr) return internal_error("openjpeg could not make a decoder");
  opj_set_error_handler(codec.get(), on_error, &src);
  opj_set_warning_handler(codec.get(), on_quiet, &src);
  opj_set_info_handler(codec.get(), on_quiet, &src);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  if (!opj_setup_decoder(codec.get(), &params))
    return internal_error("openjpeg refused its default parameters");

  std::unique_ptr<opj_stream_t, DestroyStream> stream(opj_stream_create(1 << 16, OPJ_TRUE));
  if (stream == nullptr) return internal_error("openjpeg could not make a stream");
  opj_stream_set_user_data(stream.get(), &src, nullptr);
  opj_stream_set_user_data_length(stream.get(), bytes.size());
  opj_stream_set_read_function(stream.get(), on_read);
  opj_stream_set_skip_function(stream.get(), on_skip);
  opj_stream_set_seek_function(stream.get(), on_seek);

  opj_image_t* raw_image = nullptr;
  const OPJ_BOOL header_ok = opj_read_header(stream.get(), codec.get(), &raw_image);
  std::unique_ptr<opj_image_t, DestroyImage> image(raw_image);
  if (!header_ok || image == nullptr) return decode_error(src, "the header does not decode");
  const uint32_t n = image->numcomps;
  if (n < 1 || n > 4) return variant_unsupported(kFormat, std::to_string(n) + " components");
  if (image->color_space == OPJ_CLRSPC_SYCC || image->color_space == OPJ_CLRSPC_EYCC ||
      image->color_space == OPJ_CLRSPC_CMYK)
    return variant_unsupported(kFormat, "YCC or CMYK colour");
  const int64_t width = static_cast<int64_t>(image->x1) - image->x0;
  const int64_t height = static_cast<int64_t>(image->y1) - image->y0;
  for (uint32_t i = 0; i < n; ++i) {
    const opj_image_comp_t& c = image->comps[i];
    if (c.dx != 1 || c.dy != 1) return variant_unsupported(kFormat, "subsampled components");
    if (c.prec < 1 || c.prec > 16)
      return variant_unsupported(kFormat, std::to_string(c.prec) + "-bit samples");
  }
  const int channels = n >= 3 ? 3 : 1;
  // Checked before openjpeg allocates the components.
  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, width, height, channels));

  if (!opj_decode(codec.get(), stream.get(), image.get()) ||
      !opj_end_decompress(codec.get(), stream.get()))
    return decode_error(src, "the image does not decode");
  for (int ch = 0; ch < channels; ++ch) {
    const opj_image_comp_t& c = image->comps[ch];
    if (c.data == nullptr || static_cast<int64_t>(c.w) != width ||
        static_cast<int64_t>(c.h) != height)
      return corrupt(kFormat, "component " + std::to_string(ch) + " is " + std::to_string(c.w) +
                                  "x" + std::to_string(c.h) + ", the image " +
                                  std::to_string(width) + "x" + std::to_string(height));
  }
  const auto pixels = static_cast<size_t>(width * height);
  for (size_t i = 0; i < pixels; ++i)
    for (int ch = 0; ch < channels; ++ch)
      img.pixels[i * static_cast<size_t>(channels) + static_cast<size_t>(ch)] =
          to_8_bits(image->comps[ch], i);
  return img;
}

}  // namespace xopt::exec::image::detail

#else  // !XOPT_HAVE_OPENJPEG

namespace xopt::exec::image::detail {

const bool kJpeg2000BuiltIn = false;

Result<Image> decode_jpeg2000(Bytes) {
  return not_built("JPEG 2000", "libopenjp2");
}

}  // namespace xopt::exec::image::detail

#endif
