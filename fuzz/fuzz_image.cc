// The image decoders behind ImageDecoder (executor/cpu/image): whatever the bytes, decode_image()
// returns an error or an image whose pixels fill its dims exactly, within the pixel limit.
#include <cstddef>
#include <cstdint>
#include <span>

#include "executor/cpu/image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xopt::exec::image;
  auto img = decode_image(std::span<const uint8_t>(data, size));
  if (!img.is_ok()) return 0;
  if (img->channels != 1 && img->channels != 3) __builtin_trap();
  if (img->width <= 0 || img->height <= 0 || img->width * img->height > kMaxPixels)
    __builtin_trap();
  if (img->pixels.size() != static_cast<size_t>(img->width * img->height * img->channels))
    __builtin_trap();
  return 0;
}
