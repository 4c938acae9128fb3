#include "kubeload/zlib.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace kubeload {

std::vector<uint8_t> deflate_bytes(std::span<const uint8_t> input) {
  uLongf compressed_size = compressBound(static_cast<uLong>(input.size()));
  std::vector<uint8_t> compressed(compressed_size);
  const int status = compress2(compressed.data(), &compressed_size, input.data(),
                               static_cast<uLong>(input.size()), Z_DEFAULT_COMPRESSION);
  if (status != Z_OK)
    throw std::runtime_error("zlib compress2 failed (" + std::to_string(status) + ")");
  compressed.resize(compressed_size);
  return compressed;
}

Inflater::Inflater() {
  if (inflateInit(&stream_) != Z_OK) throw std::runtime_error("zlib inflateInit failed");
}

Inflater::~Inflater() {
  inflateEnd(&stream_);
}

void Inflater::inflate_all(std::span<const uint8_t> data, size_t max_output,
                           std::vector<uint8_t>& output) {
  if (inflateReset(&stream_) != Z_OK) throw std::runtime_error("zlib inflateReset failed");
  output.clear();
  std::array<uint8_t, 16 * 1024> chunk;
  stream_.next_in = const_cast<Bytef*>(data.data());  // zlib's API is not const-correct
  stream_.avail_in = static_cast<uInt>(data.size());
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream_.next_out = chunk.data();
    stream_.avail_out = static_cast<uInt>(chunk.size());
    status = inflate(&stream_, Z_NO_FLUSH);
    if (status == Z_BUF_ERROR ||
        (status == Z_OK && stream_.avail_in == 0 && stream_.avail_out != 0)) {
      throw std::invalid_argument("compressed data is truncated");
    }
    if (status != Z_OK && status != Z_STREAM_END) {
      throw std::invalid_argument(
          std::string("compressed data is corrupt (zlib: ") +
          (stream_.msg != nullptr ? stream_.msg : "error " + std::to_string(status)) + ")");
    }
    const size_t produced = chunk.size() - stream_.avail_out;
    if (produced > max_output - output.size()) {
      throw std::invalid_argument("decompressed data exceeds " + std::to_string(max_output) +
                                  " bytes");
    }
    output.insert(output.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(produced));
  }
  if (stream_.avail_in != 0) {
    throw std::invalid_argument(std::to_string(stream_.avail_in) +
                                " stray bytes after the compressed data");
  }
}

}  // namespace kubeload
