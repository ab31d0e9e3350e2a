// A zip archive written in one pass, for the Excel workbooks (an .xlsx file is a zip of XML parts).
// Members are written one after another; the caller appends a member's bytes while a second thread
// deflates the previous buffer (ISA-L's fast level: a 10 M-row sheet is about 1 GB of XML) and writes
// it, so formatting and compressing share the two cores. Each local header is patched with the
// member's CRC and sizes once it is complete; each carries a zip64 field, and the directory zip64
// records where a member or the archive passes 4 GiB. For the report module's own use.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_io.hpp"

namespace inferbench::report {

class ZipWriter {
public:
    // Writes to `output`'s staging path; a failure to write throws through output.fail() (EnvironmentError
    // "cannot write <target>: <cause>"), and the OutputFile then removes what was written.
    explicit ZipWriter(OutputFile& output);
    ZipWriter(const ZipWriter&) = delete;
    ZipWriter& operator=(const ZipWriter&) = delete;
    ~ZipWriter();  // an archive not finished is abandoned: the thread stops, the file stays incomplete

    // Starts a member (closing the one before); `name` is its path in the archive ("xl/workbook.xml").
    void begin(std::string_view name);
    // Appends to the current member. Cheap: a copy into a buffer that goes to the compressing thread
    // once full.
    void append(std::string_view bytes);
    // The current member's buffer, for a writer that formats into it directly; call flush_if_full() after.
    std::string& buffer() { return *buffer_; }
    void flush_if_full() {
        if (buffer_->size() >= kBufferBytes) hand_over();
    }
    // Closes the last member, writes the central directory and syncs the file. Nothing may follow.
    void finish();

    static constexpr std::size_t kBufferBytes = 1 << 20;

private:
    struct Job;
    class Worker;
    void hand_over();
    void send(Job job);

    OutputFile& output_;
    std::unique_ptr<Worker> worker_;
    std::unique_ptr<std::string> buffer_;
    bool in_member_ = false;
};

}  // namespace inferbench::report
