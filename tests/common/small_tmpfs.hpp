// A small tmpfs mounted for one test, to fill a disk for real: writes there fail with ENOSPC once
// `size` bytes are used. Mounting needs root (CI runs the tests as root); where it is refused,
// reason() says why and the test skips. Unmounted (lazily, should a file still be open) at the end.
#pragma once

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace inferbench::testing {

class SmallTmpfs {
public:
    // Mounts at `at` (created), `size` as mount(8) takes it: "256k", "2m".
    SmallTmpfs(const std::filesystem::path& at, const std::string& size) : at_(at) {
        std::filesystem::create_directories(at_);
        const std::string options = "size=" + size + ",mode=0755";
        if (::mount("tmpfs", at_.c_str(), "tmpfs", 0, options.c_str()) == 0) {
            mounted_ = true;
        } else {
            reason_ = "cannot mount a tmpfs at " + at_.string() + " (" + std::strerror(errno) +
                      "): the disk-full tests need root";
        }
    }
    SmallTmpfs(const SmallTmpfs&) = delete;
    SmallTmpfs& operator=(const SmallTmpfs&) = delete;
    ~SmallTmpfs() {
        if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
    }

    bool mounted() const { return mounted_; }
    const std::string& reason() const { return reason_; }
    const std::filesystem::path& path() const { return at_; }

private:
    std::filesystem::path at_;
    bool mounted_ = false;
    std::string reason_;
};

}  // namespace inferbench::testing
