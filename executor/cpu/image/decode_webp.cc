// WebP through libwebp: a still image (lossy or lossless) decoded to RGB with the decoder's
// defaults (fancy upsampling), as Pillow decodes it; alpha dropped. Animations are refused.
#include "executor/cpu/image/codecs.h"

#if XOPT_HAVE_WEBP

#include <webp/decode.h>

namespace xopt::exec::image::detail {

const bool kWebpBuiltIn = true;

Result<Image> decode_webp(Bytes bytes) {
  constexpr const char* kFormat = "WebP";
  WebPBitstreamFeatures features;
  const VP8StatusCode st = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (st == VP8_STATUS_NOT_ENOUGH_DATA) return truncated(kFormat, "the header is cut short");
  if (st != VP8_STATUS_OK)
    return corrupt(kFormat, "libwebp cannot read the header (status " + std::to_string(st) + ")");
  if (features.has_animation) return variant_unsupported(kFormat, "animation");
  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, features.width, features.height, 3));
  const int stride = features.width * 3;  // width <= 16383: no overflow
  if (WebPDecodeRGBInto(bytes.data(), bytes.size(), img.pixels.data(), img.pixels.size(), stride) ==
      nullptr)
    return corrupt(kFormat, "libwebp cannot decode the image (corrupt or truncated)");
  return img;
}

}  // namespace xopt::exec::image::detail

#else  // !XOPT_HAVE_WEBP

namespace xopt::exec::image::detail {

const bool kWebpBuiltIn = false;

Result<Image> decode_webp(Bytes) {
  return not_built("WebP", "libwebp");
}

}  // namespace xopt::exec::image::detail

#endif
