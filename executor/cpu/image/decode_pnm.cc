// PNM (graymaps P2/P5 and pixmaps P3/P6, samples of at most 8 bits), read by a parser of its own:
// no library xopt links reads PNM from memory (libjpeg-turbo's reader is in its cjpeg tool and
// libturbojpeg's file-name-only tjLoadImage; libnetpbm reads FILE streams and exits or prints on
// errors unless its global hooks are set). Read as Pillow reads it: header tokens separated by
// whitespace, a '#' comment running to the end of its line, one whitespace byte after maxval and
// then the raster; samples scaled to 0..255 as round(v / maxval * 255), ties to even (binary
// samples over maxval clip to 255, plain ones are an error). The sample count is checked against
// the stream before the image is allocated.
#include <string>

#include "executor/cpu/image/codecs.h"

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "PNM";
constexpr size_t kMaxToken = 10;  // Pillow's limit on a header or plain-data token

bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Reads PNM tokens from a stream: header fields, and the samples of the plain formats.
class Tokens {
 public:
  explicit Tokens(Bytes b, size_t pos) : b_(b), pos_(pos) {}
  size_t pos() const { return pos_; }

  // Skips whitespace and comments (a '#' through the end of its line).
  void skip_space() {
    while (pos_ < b_.size()) {
      if (b_[pos_] == '#')
        skip_comment();
      else if (is_space(b_[pos_]))
        ++pos_;
      else
        return;
    }
  }
  bool at_end() {
    skip_space();
    return pos_ == b_.size();
  }

  // The next token as a number of at most kMaxToken digits; `what` names it in errors. Consumes
  // the one whitespace byte that ends it. A comment inside a token is skipped, as Pillow does.
  Result<uint64_t> number(const char* what) {
    if (at_end()) return truncated(kFormat, std::string(what) + " is missing");
    std::string token;
    while (pos_ < b_.size()) {
      const uint8_t c = b_[pos_++];
      if (is_space(c)) break;
      if (c == '#') {
        --pos_;
        skip_comment();
        continue;
      }
      if (c < '0' || c > '9')
        return corrupt(kFormat,
                       std::string(what) + " has a byte that is not a digit (0x" + hex(c) + ")");
      token += static_cast<char>(c);
      if (token.size() > kMaxToken) return corrupt(kFormat, std::string(what) + " is too long");
    }
    return std::stoull(token);  // 1 to 10 digits
  }

 private:
  void skip_comment() {
    while (pos_ < b_.size() && b_[pos_] != '\n' && b_[pos_] != '\r') ++pos_;
    if (pos_ < b_.size()) ++pos_;
  }
  static std::string hex(uint8_t c) {
    const char* digits = "0123456789abcdef";
    return {digits[c >> 4], digits[c & 15]};
  }

  Bytes b_;
  size_t pos_;
};

// round(v / maxval * 255) with ties to even, in integers.
uint8_t scale(uint64_t v, uint64_t maxval) {
  if (maxval == 255) return static_cast<uint8_t>(v > 255 ? 255 : v);
  const uint64_t num = v * 255;
  uint64_t q = num / maxval;
  const uint64_t twice_rest = 2 * (num % maxval);
  if (twice_rest > maxval || (twice_rest == maxval && (q & 1) != 0)) ++q;
  return static_cast<uint8_t>(q > 255 ? 255 : q);
}

}  // namespace

Result<Image> decode_pnm(Bytes b) {
  if (b.size() < 3 || !is_space(b[2]))
    return corrupt(kFormat, "the magic number is not P2, P3, P5 or P6 and whitespace");
  const bool plain = b[1] == '2' || b[1] == '3';
  const int channels = b[1] == '3' || b[1] == '6' ? 3 : 1;
  Tokens tokens(b, 3);
  XOPT_ASSIGN_OR_RETURN(const uint64_t width, tokens.number("the width"));
  XOPT_ASSIGN_OR_RETURN(const uint64_t height, tokens.number("the height"));
  XOPT_ASSIGN_OR_RETURN(const uint64_t maxval, tokens.number("maxval"));
  if (maxval == 0 || maxval > 65535)
    return corrupt(kFormat, "maxval " + std::to_string(maxval) + " is not in 1..65535");
  if (maxval > 255) return variant_unsupported(kFormat, "16-bit samples (maxval > 255)");
  if (width == 0 || height == 0)
    return corrupt(kFormat, "the image is " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels");
  // Every sample takes at least one byte of the stream (a plain one, one digit): the image must
  // fit in what is left before it is allocated (width, height < 10^10: the division keeps this
  // within 64 bits).
  const uint64_t left = b.size() - tokens.pos();
  const uint64_t row = static_cast<uint64_t>(width) * static_cast<uint64_t>(channels);
  if (height > left / row)
    return truncated(kFormat, std::to_string(width) + "x" + std::to_string(height) +
                                  " pixels need more samples than the " + std::to_string(left) +
                                  " bytes left in the stream");
  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, static_cast<int64_t>(width),
                                              static_cast<int64_t>(height), channels));
  const size_t n = img.pixels.size();
  if (!plain) {
    const uint8_t* in = b.data() + tokens.pos();
    for (size_t i = 0; i < n; ++i) img.pixels[i] = scale(in[i], maxval);
    return img;
  }
  for (size_t i = 0; i < n; ++i) {
    if (tokens.at_end())
      return truncated(kFormat,
                       "it has " + std::to_string(i) + " of " + std::to_string(n) + " samples");
    XOPT_ASSIGN_OR_RETURN(const uint64_t v, tokens.number("a sample"));
    if (v > maxval)
      return corrupt(kFormat,
                     "sample " + std::to_string(v) + " is over maxval " + std::to_string(maxval));
    img.pixels[i] = scale(v, maxval);
  }
  return img;
}

}  // namespace xopt::exec::image::detail
