// ImageDecoder (opset 20): a uint8 1-D encoded image (BMP, JPEG, JPEG 2000, PNG, PNM, TIFF or
// WebP, told apart by their first bytes: executor/cpu/image) decoded to uint8 [H, W, 3] in RGB
// or BGR order, or [H, W, 1] gray. Pixels are the ONNX reference's, which decodes with Pillow;
// gray is Pillow's convert("L") of the RGB image: ITU-R 601-2 luma in its fixed point,
// (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16.
#include <cstring>
#include <span>
#include <string>

#include "executor/cpu/image/image.h"
#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

uint8_t luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

Status image_decoder(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("encoded_stream is required");
  if (x->dtype() != ir::DType::kUInt8 || x->rank() != 1)
    return ctx.error("encoded_stream must be a 1-D uint8 tensor");
  const std::string format = ctx.node().attr_string("pixel_format", "RGB");
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return ctx.error("pixel_format must be RGB, BGR or Grayscale, not '" + format + "'");
  if (x->numel() == 0) return ctx.error("encoded_stream is empty");
  auto decoded = image::decode_image(
      std::span<const uint8_t>(x->data<uint8_t>(), static_cast<size_t>(x->numel())));
  if (!decoded.is_ok()) return decoded.status().with_context(ctx.node().describe() + ": ");
  const image::Image& img = *decoded;
  const int64_t channels = format == "Grayscale" ? 1 : 3;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y,
                        ctx.output_uninit(0, ir::DType::kUInt8, {img.height, img.width, channels}));
  uint8_t* out = y->mutable_data<uint8_t>();
  const uint8_t* in = img.pixels.data();
  const auto pixels = static_cast<size_t>(img.height * img.width);
  if (img.channels == 1) {  // a gray image: its level, or the level three times
    for (size_t i = 0; i < pixels; ++i)
      std::memset(out + i * static_cast<size_t>(channels), in[i], static_cast<size_t>(channels));
  } else if (format == "Grayscale") {
    for (size_t i = 0; i < pixels; ++i) out[i] = luma(in + 3 * i);
  } else if (format == "BGR") {
    for (size_t i = 0; i < pixels; ++i) {
      out[3 * i] = in[3 * i + 2];
      out[3 * i + 1] = in[3 * i + 1];
      out[3 * i + 2] = in[3 * i];
    }
  } else {
    std::memcpy(out, in, 3 * pixels);
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "ImageDecoder", 20, kLatest, image_decoder);

}  // namespace xopt::exec::ops
