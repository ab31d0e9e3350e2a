// A local HTTP/1.1 server for client tests and benchmarks: 127.0.0.1 on a free port, one thread per
// connection, keep-alive, and every answer written by the caller's handler as raw bytes, so that a test can
// send whatever a real server might (chunked events, a wrong status, a cut-off stream, nothing at all).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace inferbench::testing {

struct HttpRequest {
    std::string method;
    std::string path;
    std::string headers;  // the header lines as they came
    std::string body;
};

// One connection as a handler sees it.
class HttpConnection {
public:
    HttpConnection(int fd, const std::atomic<bool>& stopping, std::mutex& mutex, std::condition_variable& stopped)
        : fd_(fd), stopping_(stopping), mutex_(mutex), stopped_(stopped) {}
    bool send(std::string_view bytes) const {
        while (!bytes.empty()) {
            const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (sent <= 0) return false;
            bytes.remove_prefix(static_cast<std::size_t>(sent));
        }
        return true;
    }
    // One chunk of a chunked body ("" ends the body).
    bool send_chunk(std::string_view bytes) const {
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
        return send(std::string(size) + std::string(bytes) + "\r\n");
    }
    // Waits until the server stops or the time has passed: a server that never answers.
    void wait_for_stop(std::chrono::milliseconds at_most) const {
        std::unique_lock lock(mutex_);
        stopped_.wait_for(lock, at_most, [this] { return stopping_.load(); });
    }

private:
    int fd_;
    const std::atomic<bool>& stopping_;
    std::mutex& mutex_;
    std::condition_variable& stopped_;
};

// The handler answers one request; it returns whether the connection stays open for the next one.
using HttpHandler = std::function<bool(const HttpRequest&, const HttpConnection&)>;

class LocalHttpServer {
public:
    explicit LocalHttpServer(HttpHandler handler) : handler_(std::move(handler)) {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;  // a free port
        socklen_t length = sizeof address;
        if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listen_fd_, 256) != 0 ||
            ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
            throw std::runtime_error("the test server cannot listen on 127.0.0.1");
        port_ = ntohs(address.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    LocalHttpServer(const LocalHttpServer&) = delete;
    LocalHttpServer& operator=(const LocalHttpServer&) = delete;
    ~LocalHttpServer() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            for (const int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
        }
        stopped_.notify_all();
        ::shutdown(listen_fd_, SHUT_RDWR);
        acceptor_.join();
        for (std::thread& connection : connections_) connection.join();
        ::close(listen_fd_);
    }

    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int connections_accepted() const { return accepted_.load(); }

private:
    void accept_loop() {
        for (;;) {
            const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) return;
            std::lock_guard lock(mutex_);
            if (stopping_) {
                ::close(fd);
                return;
            }
            ++accepted_;
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            open_fds_.push_back(fd);
            connections_.emplace_back([this, fd] { serve(fd); });
        }
    }

    // Reads one request (headers, then a Content-Length body) into `request`; false at the connection's end.
    static bool read_request(int fd, std::string& buffer, HttpRequest& request) {
        std::size_t headers_end;
        while ((headers_end = buffer.find("\r\n\r\n")) == std::string::npos)
            if (!read_more(fd, buffer)) return false;
        const std::string head = buffer.substr(0, headers_end);
        const std::size_t line_end = head.find("\r\n");
        const std::string line = head.substr(0, line_end);
        request.method = line.substr(0, line.find(' '));
        request.path = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
        request.headers = line_end == std::string::npos ? "" : head.substr(line_end + 2);
        std::size_t length = 0;
        for (const char* name : {"Content-Length: ", "content-length: "})
            if (const std::size_t at = head.find(name); at != std::string::npos)
                length = std::stoul(head.substr(at + std::string_view(name).size()));
        while (buffer.size() < headers_end + 4 + length)
            if (!read_more(fd, buffer)) return false;
        request.body = buffer.substr(headers_end + 4, length);
        buffer.erase(0, headers_end + 4 + length);
        return true;
    }

    static bool read_more(int fd, std::string& buffer) {
        char bytes[4096];
        const ssize_t got = ::recv(fd, bytes, sizeof bytes, 0);
        if (got <= 0) return false;
        buffer.append(bytes, static_cast<std::size_t>(got));
        return true;
    }

    void serve(int fd) {
        const HttpConnection connection(fd, stopping_, mutex_, stopped_);
        std::string buffer;
        HttpRequest request;
        while (!stopping_ && read_request(fd, buffer, request) && handler_(request, connection)) {
        }
        std::lock_guard lock(mutex_);
        open_fds_.remove(fd);
        ::close(fd);
    }

    HttpHandler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepted_{0};
    std::mutex mutex_;
    std::condition_variable stopped_;
    std::list<int> open_fds_;
    std::list<std::thread> connections_;
    std::thread acceptor_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed): connections to it are refused.
inline int closed_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

// "HTTP/1.1 200 OK" headers of a chunked event stream kept alive.
inline std::string event_stream_headers() {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
           "Connection: keep-alive\r\n\r\n";
}

// A complete answer with a Content-Length body.
inline std::string http_answer(int status, std::string_view reason, std::string_view content_type,
                               std::string_view body) {
    return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
           "\r\nContent-Type: " + std::string(content_type) + "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + std::string(body);
}

}  // namespace inferbench::testing
