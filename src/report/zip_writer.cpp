#include "report/zip_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

namespace inferbench::report {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEnd = 0x06054b50,
                        kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr std::uint16_t kZip64Version = 45, kPlainVersion = 20, kDeflated = 8;
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01: the same bytes for the same content
constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint16_t kLocalExtraBytes = 20;  // the zip64 field: id, size, then both sizes
constexpr std::size_t kQueuedBuffers = 2;       // formatting runs at most this far ahead of compression

void put16(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put32(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put64(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
std::uint64_t capped(std::uint64_t value) { return std::min(value, kMax32); }

struct Entry {
    std::string name;
    std::uint64_t header_offset = 0, compressed = 0, uncompressed = 0;
    std::uint32_t crc = 0;
    bool needs_zip64() const { return compressed >= kMax32 || uncompressed >= kMax32 || header_offset >= kMax32; }
};

std::string central_entry(const Entry& e) {
    std::string extra;  // zip64: only the fields that do not fit, in this order
    if (e.uncompressed >= kMax32) put64(extra, e.uncompressed);
    if (e.compressed >= kMax32) put64(extra, e.compressed);
    if (e.header_offset >= kMax32) put64(extra, e.header_offset);
    std::string out;
    put32(out, kCentralHeader);
    put16(out, kZip64Version);  // made by: MS-DOS attributes, zip 4.5
    put16(out, e.needs_zip64() ? kZip64Version : kPlainVersion);
    put16(out, 0);
    put16(out, kDeflated);
    put16(out, 0);
    put16(out, kDosDate);
    put32(out, e.crc);
    put32(out, capped(e.compressed));
    put32(out, capped(e.uncompressed));
    put16(out, e.name.size());
    put16(out, extra.empty() ? 0 : extra.size() + 4);
    put16(out, 0);  // comment
    put16(out, 0);  // disk
    put16(out, 0);  // internal attributes
    put32(out, 0);  // external attributes
    put32(out, capped(e.header_offset));
    out += e.name;
    if (!extra.empty()) {
        put16(out, 1);
        put16(out, extra.size());
        out += extra;
    }
    return out;
}

// The end records: zip64 ones where the count, size or offset of the directory does not fit.
std::string end_records(std::uint64_t entries, std::uint64_t directory_offset, std::uint64_t directory_bytes) {
    std::string out;
    const bool zip64 = entries >= 0xffff || directory_offset >= kMax32 || directory_bytes >= kMax32;
    if (zip64) {
        const std::uint64_t record_offset = directory_offset + directory_bytes;
        put32(out, kZip64End);
        put64(out, 44);
        put16(out, kZip64Version);
        put16(out, kZip64Version);
        put32(out, 0);
        put32(out, 0);
        put64(out, entries);
        put64(out, entries);
        put64(out, directory_bytes);
        put64(out, directory_offset);
        put32(out, kZip64Locator);
        put32(out, 0);
        put64(out, record_offset);
        put32(out, 1);
    }
    put32(out, kEnd);
    put16(out, 0);
    put16(out, 0);
    put16(out, std::min<std::uint64_t>(entries, 0xffff));
    put16(out, std::min<std::uint64_t>(entries, 0xffff));
    put32(out, capped(directory_bytes));
    put32(out, capped(directory_offset));
    put16(out, 0);
    return out;
}

}  // namespace

struct ZipWriter::Job {
    enum class Kind { begin, data, end, finish } kind;
    std::string name;                   // begin
    std::unique_ptr<std::string> data;  // data: back to the pool once compressed
};

// The second thread: deflates and writes the jobs in order. After a failure it only recycles buffers;
// the cause is kept for the caller's next call.
class ZipWriter::Worker {
public:
    explicit Worker(const std::filesystem::path& file)
        : fd_(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)),
          level_buffer_(ISAL_DEF_LVL1_DEFAULT),
          out_(kBufferBytes / 2) {
        if (fd_ < 0) {
            error_ = errno_text(errno);
            return;
        }
        thread_ = std::thread([this] { run(); });
    }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    ~Worker() {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        if (thread_.joinable()) thread_.join();
        if (fd_ >= 0) ::close(fd_);
    }

    // Queues a job, waiting while the thread is kQueuedBuffers behind. Returns the failure so far, if any.
    std::optional<std::string> push(Job job) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return queue_.size() < kQueuedBuffers || !error_.empty(); });
        if (!error_.empty()) return error_;
        queue_.push_back(std::move(job));
        changed_.notify_all();
        return std::nullopt;
    }

    std::unique_ptr<std::string> spare_buffer() {
        const std::lock_guard lock(mutex_);
        if (spare_.empty()) {
            auto buffer = std::make_unique<std::string>();
            buffer->reserve(kBufferBytes + (kBufferBytes >> 4));
            return buffer;
        }
        auto buffer = std::move(spare_.back());
        spare_.pop_back();
        return buffer;
    }

    // Waits for the finish job to be done; the failure, if any.
    std::optional<std::string> wait_finished() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return finished_ || !error_.empty(); });
        if (!error_.empty()) return error_;
        return std::nullopt;
    }

private:
    void run() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_) return;
                job = std::move(queue_.front());
                queue_.pop_front();
            }
            std::string failure;
            try {
                if (error_empty()) process(job);
            } catch (const std::exception& e) {
                failure = e.what();
            }
            const std::lock_guard lock(mutex_);
            if (!failure.empty() && error_.empty()) error_ = failure;
            if (job.data) {
                job.data->clear();
                spare_.push_back(std::move(job.data));
            }
            if (job.kind == Job::Kind::finish) finished_ = true;
            changed_.notify_all();
        }
    }

    bool error_empty() {
        const std::lock_guard lock(mutex_);
        return error_.empty();
    }

    void process(Job& job) {
        switch (job.kind) {
            case Job::Kind::begin: return begin_member(std::move(job.name));
            case Job::Kind::data: return deflate(*job.data, false);
            case Job::Kind::end: return end_member();
            case Job::Kind::finish: return finish_archive();
        }
    }

    void begin_member(std::string name) {
        Entry& entry = entries_.emplace_back();
        entry.name = std::move(name);
        entry.header_offset = offset_;
        std::string header;
        put32(header, kLocalHeader);
        put16(header, kZip64Version);
        put16(header, 0);
        put16(header, kDeflated);
        put16(header, 0);
        put16(header, kDosDate);
        put32(header, 0);  // CRC and sizes: patched by end_member
        put32(header, 0);
        put32(header, 0);
        put16(header, entry.name.size());
        put16(header, kLocalExtraBytes);
        header += entry.name;
        put16(header, 1);
        put16(header, 16);
        put64(header, 0);
        put64(header, 0);
        write(header);
        isal_deflate_init(&stream_);
        stream_.level = 1;
        stream_.level_buf = level_buffer_.data();
        stream_.level_buf_size = static_cast<std::uint32_t>(level_buffer_.size());
    }

    void deflate(std::string_view data, bool last) {
        Entry& entry = entries_.back();
        const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
        entry.crc = crc32_gzip_refl(entry.crc, bytes, data.size());
        entry.uncompressed += data.size();
        stream_.next_in = const_cast<std::uint8_t*>(bytes);  // ISA-L's API is not const-correct; it only reads
        stream_.avail_in = static_cast<std::uint32_t>(data.size());
        stream_.end_of_stream = last ? 1 : 0;
        do {
            stream_.next_out = out_.data();
            stream_.avail_out = static_cast<std::uint32_t>(out_.size());
            if (const int status = isal_deflate(&stream_); status != COMP_OK)
                throw std::runtime_error("deflate failed (ISA-L status " + std::to_string(status) + ")");
            const std::size_t produced = out_.size() - stream_.avail_out;
            entry.compressed += produced;
            write({reinterpret_cast<const char*>(out_.data()), produced});
        } while (stream_.avail_in > 0 || stream_.avail_out == 0 ||
                 (last && stream_.internal_state.state != ZSTATE_END));
    }

    void end_member() {
        deflate({}, true);
        const Entry& entry = entries_.back();
        std::string sizes;
        put32(sizes, entry.crc);
        put32(sizes, entry.compressed >= kMax32 ? kMax32 : entry.compressed);
        put32(sizes, entry.uncompressed >= kMax32 ? kMax32 : entry.uncompressed);
        write_at(sizes, entry.header_offset + 14);
        std::string zip64;
        put64(zip64, entry.uncompressed);
        put64(zip64, entry.compressed);
        write_at(zip64, entry.header_offset + 30 + entry.name.size() + 4);
    }

    void finish_archive() {
        const std::uint64_t directory_offset = offset_;
        std::string directory;
        for (const auto& entry : entries_) directory += central_entry(entry);
        write(directory);
        write(end_records(entries_.size(), directory_offset, directory.size()));
        // A crash after the rename must not leave a complete-looking name with missing contents.
        if (::fsync(fd_) != 0 && errno != EINVAL) throw std::runtime_error(errno_text(errno));
        if (::close(std::exchange(fd_, -1)) != 0) throw std::runtime_error(errno_text(errno));
    }

    void write(std::string_view bytes) {
        offset_ += bytes.size();
        while (!bytes.empty()) {
            const ssize_t put = ::write(fd_, bytes.data(), bytes.size());
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) throw std::runtime_error(errno_text(put < 0 ? errno : ENOSPC));
            bytes.remove_prefix(static_cast<std::size_t>(put));
        }
    }

    void write_at(std::string_view bytes, std::uint64_t at) {
        const ssize_t put = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(at));
        if (put != static_cast<ssize_t>(bytes.size())) throw std::runtime_error(errno_text(put < 0 ? errno : ENOSPC));
    }

    int fd_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> queue_;                           // guarded by mutex_
    std::vector<std::unique_ptr<std::string>> spare_;  // guarded by mutex_
    std::string error_;                               // guarded by mutex_
    bool stopping_ = false, finished_ = false;        // guarded by mutex_
    // The thread's own:
    std::uint64_t offset_ = 0;
    std::vector<Entry> entries_;
    isal_zstream stream_{};
    std::vector<std::uint8_t> level_buffer_, out_;
    std::thread thread_;  // last: started once the rest exists
};

ZipWriter::ZipWriter(OutputFile& output)
    : output_(output), worker_(std::make_unique<Worker>(output.staging_path())), buffer_(worker_->spare_buffer()) {}

ZipWriter::~ZipWriter() = default;

void ZipWriter::send(Job job) {
    if (auto failure = worker_->push(std::move(job))) output_.fail(*failure);
}

void ZipWriter::hand_over() {
    if (buffer_->empty()) return;
    auto full = std::exchange(buffer_, worker_->spare_buffer());
    send({Job::Kind::data, {}, std::move(full)});
}

void ZipWriter::begin(std::string_view name) {
    if (in_member_) {
        hand_over();
        send({Job::Kind::end, {}, nullptr});
    }
    send({Job::Kind::begin, std::string(name), nullptr});
    in_member_ = true;
}

void ZipWriter::append(std::string_view bytes) {
    buffer_->append(bytes);
    flush_if_full();
}

void ZipWriter::finish() {
    if (in_member_) {
        hand_over();
        send({Job::Kind::end, {}, nullptr});
        in_member_ = false;
    }
    send({Job::Kind::finish, {}, nullptr});
    if (auto failure = worker_->wait_finished()) output_.fail(*failure);
}

}  // namespace inferbench::report
