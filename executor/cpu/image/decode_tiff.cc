// TIFF through libtiff, the first image of the file, in its stored row order (Pillow applies no
// Orientation tag either). 8-bit RGB and gray strips are read as they are stored, extra samples
// (alpha) dropped, as Pillow reads them; everything else (palettes, YCbCr, CMYK, tiles, other bit
// depths) goes through libtiff's RGBA interface, which converts any photometric interpretation
// to 8-bit RGB (premultiplying unassociated alpha, which Pillow would not).
// libtiff reports errors through handlers given at open (libtiff >= 4.5; older versions report
// through their global handlers, which print).
#include "executor/cpu/image/codecs.h"

#if XOPT_HAVE_TIFF

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "TIFF";

// The stream as libtiff's client file, and the first error libtiff reported.
struct MemFile {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos;
  char message[512];
};

tmsize_t mem_read(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemFile*>(h);
  if (n < 0) return -1;
  const uint64_t left = f->pos < f->size ? f->size - f->pos : 0;
  const uint64_t k = std::min<uint64_t>(left, static_cast<uint64_t>(n));
  if (k > 0) std::memcpy(buf, f->data + f->pos, k);
  f->pos += k;
  return static_cast<tmsize_t>(k);
}

tmsize_t mem_write(thandle_t, void*, tmsize_t) {
  return -1;  // read only
}

toff_t mem_seek(thandle_t h, toff_t off, int whence) {
  auto* f = static_cast<MemFile*>(h);
  // Offsets relative to the position or the end are two's-complement in toff_t; a target past
  // the end is allowed (reads there return nothing), one before the start is an error.
  const uint64_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  const auto target = static_cast<int64_t>(base + off);
  if (target < 0) return static_cast<toff_t>(-1);
  f->pos = static_cast<uint64_t>(target);
  return f->pos;
}

int mem_close(thandle_t) {
  return 0;
}

toff_t mem_size(thandle_t h) {
  return static_cast<MemFile*>(h)->size;
}

int mem_map(thandle_t, void**, toff_t*) {
  return 0;  // not mapped: libtiff reads through mem_read
}

void mem_unmap(thandle_t, void*, toff_t) {}

#if TIFFLIB_VERSION >= 20221213
int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* f = static_cast<MemFile*>(user);
  if (f->message[0] == '\0') {
    int n = std::snprintf(f->message, sizeof f->message, "%s: ", module != nullptr ? module : "");
    if (n < 0 || static_cast<size_t>(n) >= sizeof f->message) n = 0;
    std::vsnprintf(f->message + n, sizeof f->message - static_cast<size_t>(n), fmt, ap);
  }
  return 1;  // handled: libtiff's global handler (which prints) is not called
}

int on_warning(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}
#endif

TIFF* open_tiff(MemFile* f) {
#if TIFFLIB_VERSION >= 20221213
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  if (opts == nullptr) return nullptr;
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, f);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, f);
  // At most 1 GiB in one allocation (a strip or tile buffer): libtiff refuses more.
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts, tmsize_t{1} << 30);
  TIFF* tif = TIFFClientOpenExt("encoded_stream", "rm", f, mem_read, mem_write, mem_seek, mem_close,
                                mem_size, mem_map, mem_unmap, opts);
  TIFFOpenOptionsFree(opts);
  return tif;
#else
  return TIFFClientOpen("encoded_stream", "rm", f, mem_read, mem_write, mem_seek, mem_close,
                        mem_size, mem_map, mem_unmap);
#endif
}

struct CloseTiff {
  void operator()(TIFF* t) const { TIFFClose(t); }
};

Status tiff_error(const MemFile& f, const char* fallback) {
  return corrupt(kFormat, f.message[0] != '\0' ? f.message : fallback);
}

// 8-bit RGB or gray strips, copied as stored (extra samples dropped).
Status read_scanlines(TIFF* tif, const MemFile& f, uint16_t samples, Image& img) {
  const auto per_row = static_cast<uint64_t>(img.width) * samples;
  if (TIFFScanlineSize64(tif) != per_row)
    return corrupt(kFormat, "a scanline is " + std::to_string(TIFFScanlineSize64(tif)) +
                                " bytes, not " + std::to_string(per_row));
  std::vector<uint8_t> line(static_cast<size_t>(per_row));
  const auto c = static_cast<size_t>(img.channels);
  for (int64_t y = 0; y < img.height; ++y) {
    if (TIFFReadScanline(tif, line.data(), static_cast<uint32_t>(y), 0) < 0)
      return tiff_error(f, "a scanline does not decode");
    uint8_t* out = img.pixels.data() + static_cast<size_t>(y * img.width) * c;
    for (int64_t x = 0; x < img.width; ++x)
      std::memcpy(out + static_cast<size_t>(x) * c, &line[static_cast<size_t>(x) * samples], c);
  }
  return Status::ok();
}

// Any other layout, through libtiff's RGBA interface, rows in their stored order.
Result<Image> read_rgba(TIFF* tif, const MemFile& f, int64_t width, int64_t height) {
  char emsg[1024] = {0};
  if (!TIFFRGBAImageOK(tif, emsg))
    return variant_unsupported(kFormat, std::string("this layout (") + emsg + ")");
  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, width, height, 3));
  TIFFRGBAImage rgba;
  if (!TIFFRGBAImageBegin(&rgba, tif, 0, emsg)) return corrupt(kFormat, emsg);
  rgba.req_orientation = rgba.orientation;  // no flips: the stored order, as Pillow reads it
  std::vector<uint32_t> raster(static_cast<size_t>(width * height));
  const int ok = TIFFRGBAImageGet(&rgba, raster.data(), static_cast<uint32_t>(width),
                                  static_cast<uint32_t>(height));
  TIFFRGBAImageEnd(&rgba);
  if (!ok) return tiff_error(f, "the image does not decode");
  for (size_t i = 0; i < raster.size(); ++i) {
    img.pixels[3 * i] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    img.pixels[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    img.pixels[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return img;
}

}  // namespace

const bool kTiffBuiltIn = true;

Result<Image> decode_tiff(Bytes bytes) {
  MemFile f{bytes.data(), bytes.size(), 0, {0}};
  std::unique_ptr<TIFF, CloseTiff> tif(open_tiff(&f));
  if (tif == nullptr) return tiff_error(f, "libtiff cannot open it");
  uint32_t width = 0, height = 0;
  uint16_t photometric = 0, bits = 0, samples = 0, planar = 0, sample_format = 0;
  if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width) ||
      !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height))
    return corrupt(kFormat, "no ImageWidth or ImageLength tag");
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &sample_format);
  if (!TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric))
    photometric = samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  const bool rgb = photometric == PHOTOMETRIC_RGB && samples >= 3;
  const bool gray = photometric == PHOTOMETRIC_MINISBLACK && samples >= 1;
  if (!TIFFIsTiled(tif.get()) && bits == 8 && planar == PLANARCONFIG_CONTIG &&
      sample_format == SAMPLEFORMAT_UINT && (rgb || gray)) {
    XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, width, height, rgb ? 3 : 1));
    XOPT_RETURN_IF_ERROR(read_scanlines(tif.get(), f, samples, img));
    return img;
  }
  return read_rgba(tif.get(), f, width, height);
}

}  // namespace xopt::exec::image::detail

#else  // !XOPT_HAVE_TIFF

namespace xopt::exec::image::detail {

const bool kTiffBuiltIn = false;

Result<Image> decode_tiff(Bytes) {
  return not_built("TIFF", "libtiff");
}

}  // namespace xopt::exec::image::detail

#endif
