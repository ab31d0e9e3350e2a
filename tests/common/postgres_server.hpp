// A real PostgreSQL server for tests (Debian's postgresql, /usr/lib/postgresql/<version>/bin): initdb into a fresh
// short temp folder (run as the `postgres` user where the test runs as root: initdb refuses root), a Unix socket
// in that folder, 127.0.0.1 on a free port (tried again on "Address already in use"), pg_ctl -w start. Local
// socket logins are trusted; TCP logins need the password kPassword (scram-sha-256), for the tests of wrong
// passwords. Stopped (pg_ctl stop -m immediate) and removed when the object goes; a guard process does the same
// where the test process dies first (a crash, a kill), so no server outlives its test.
#pragma once

#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fcntl.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace inferbench::testing {

class PostgresServer {
public:
    static constexpr const char* kPassword = "test-secret";

    // The folder of initdb and pg_ctl; empty where PostgreSQL's server is not installed.
    static std::filesystem::path bin_dir() {
        std::error_code ignored;
        for (const char* version : {"17", "16", "15", "14", "13"}) {
            const std::filesystem::path dir = std::filesystem::path("/usr/lib/postgresql") / version / "bin";
            if (std::filesystem::exists(dir / "pg_ctl", ignored)) return dir;
        }
        return {};
    }

    PostgresServer() {
        bin_ = bin_dir();
        if (bin_.empty())
            throw std::runtime_error("PostgreSQL's server is not installed: run scripts/setup.sh --tests "
                                     "(apt-get install postgresql)");
        char pattern[] = "/tmp/ibpg-XXXXXX";  // short: a socket path holds at most 107 bytes
        if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("cannot make a temp folder for PostgreSQL");
        dir_ = pattern;
        as_user_ = ::geteuid() == 0 ? "runuser -u postgres -- " : "";
        if (::geteuid() == 0) shell("chown postgres: " + dir_.string());
        std::ofstream(dir_ / "pw") << kPassword << "\n";
        if (::geteuid() == 0) shell("chown postgres: " + (dir_ / "pw").string());
        shell("timeout 120 " + as_user_ + (bin_ / "initdb").string() + " -D " + data() + " -U postgres --auth-local=trust " +
                  "--auth-host=scram-sha-256 --pwfile=" + (dir_ / "pw").string() +
                  " --locale=C.UTF-8 -E UTF8 --no-sync > " + (dir_ / "initdb.log").string() + " 2>&1",
              dir_ / "initdb.log");
        start_guard();
        for (int attempt = 0;; ++attempt) {
            port_ = free_port();
            if (try_start()) break;
            if (attempt == 4 || log_text().find("already in use") == std::string::npos)
                throw std::runtime_error("PostgreSQL did not start: " + log_text());
        }
    }

    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;

    ~PostgresServer() {
        stop();
        if (guard_write_ >= 0) ::close(guard_write_);  // the guard sees the end of its pipe and finds nothing left
        if (guard_ > 0) ::waitpid(guard_, nullptr, 0);
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    int port() const { return port_; }
    const std::filesystem::path& socket_dir() const { return dir_; }

    // A URL of `database` through the Unix socket, as user postgres (trusted: no password).
    std::string url(const std::string& database = "postgres") const {
        std::string host;
        for (const char c : dir_.string()) host += c == '/' ? std::string("%2F") : std::string(1, c);
        return "postgresql://postgres@" + host + ":" + std::to_string(port_) + "/" + database;
    }
    // The same database through TCP on 127.0.0.1, where a password is asked.
    std::string tcp_url(const std::string& database = "postgres") const {
        return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
    }

    // A new, empty database; returns its URL.
    std::string fresh_database() {
        const std::string name = "ib_" + std::to_string(::getpid()) + "_" + std::to_string(next_database_++);
        admin("CREATE DATABASE " + name + " STRATEGY = FILE_COPY");
        return url(name);
    }

    // Runs constant SQL on the `postgres` database as the superuser.
    void admin(const std::string& sql) const {
        PGconn* conn = PQconnectdb(url().c_str());
        const bool connected = PQstatus(conn) == CONNECTION_OK;
        PGresult* result = connected ? PQexec(conn, sql.c_str()) : nullptr;
        const bool ok = result != nullptr && PQresultStatus(result) == PGRES_COMMAND_OK;
        const std::string message = PQerrorMessage(conn);
        PQclear(result);
        PQfinish(conn);
        if (!ok) throw std::runtime_error("PostgreSQL: " + sql + ": " + message);
    }

private:
    std::string data() const { return (dir_ / "data").string(); }

    static void shell(const std::string& command, const std::filesystem::path& log = {}) {
        if (std::system(command.c_str()) == 0) return;
        std::ostringstream text;
        if (!log.empty()) text << std::ifstream(log).rdbuf();
        throw std::runtime_error("failed: " + command + "\n" + text.str());
    }

    static int free_port() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
        ::close(fd);
        return ntohs(address.sin_port);
    }

    std::string log_text() const {
        std::ostringstream text;
        text << std::ifstream(dir_ / "server.log").rdbuf();
        return text.str();
    }

    bool try_start() {
        const std::string options = "-p " + std::to_string(port_) + " -k " + dir_.string() +
                                    " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
                                    " -c full_page_writes=off -c max_connections=60";
        const std::string command = "timeout 90 " + as_user_ + (bin_ / "pg_ctl").string() + " -D " + data() + " -l " +
                                    (dir_ / "server.log").string() + " -w -t 60 -o '" + options + "' start > /dev/null 2>&1";
        started_ = std::system(command.c_str()) == 0;
        return started_;
    }

    void stop() noexcept {
        if (!started_) return;
        started_ = false;
        const std::string command = "timeout 60 " + as_user_ + (bin_ / "pg_ctl").string() + " -D " + data() +
                                    " -m immediate -w -t 30 stop > /dev/null 2>&1";
        [[maybe_unused]] const int ignored = std::system(command.c_str());
    }

    // A child that waits for this process to end (its pipe closing) and then stops the server and removes its
    // folder: a test process killed or crashed leaves nothing running.
    void start_guard() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) return;
        const std::string stop_command = "timeout 60 " + as_user_ + (bin_ / "pg_ctl").string() + " -D " + data() +
                                         " -m immediate -w -t 30 stop > /dev/null 2>&1; rm -rf " + dir_.string();
        guard_ = ::fork();
        if (guard_ == 0) {
            ::close(fds[1]);
            ::setpgid(0, 0);  // out of the test's process group: a signal to the group does not end the guard first
            char byte;
            for (;;) {
                const ssize_t got = ::read(fds[0], &byte, 1);
                if (got == 0 || (got < 0 && errno != EINTR)) break;
            }
            ::execl("/bin/sh", "sh", "-c", stop_command.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(fds[0]);
        guard_write_ = fds[1];
    }

    std::filesystem::path bin_;
    std::filesystem::path dir_;
    std::string as_user_;
    int port_ = 0;
    bool started_ = false;
    pid_t guard_ = -1;
    int guard_write_ = -1;
    int next_database_ = 0;
};

}  // namespace inferbench::testing
