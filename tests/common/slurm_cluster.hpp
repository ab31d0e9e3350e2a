// A real one-node Slurm cluster for tests (Debian's slurm-wlm and munge, installed by scripts/setup.sh --tests):
// munged with its own key and socket, `slurmctld -D` and `slurmd -D` with a generated slurm.conf in a short fresh
// temp folder, on free ports. Process tracking is proctrack/linuxproc with task/none (the default cgroup tracking
// fails silently without a freezer cgroup: jobs end COMPLETED without running and the node drains); two fake GPUs
// are gres links to /dev/null, so `--gres=gpu:1` tasks get CUDA_VISIBLE_DEVICES; a requeued job may start again
// after cred_expire (10 s here, 120 s by default). Every command a test runs needs SLURM_CONF (env()).
// The destructor cancels every job, waits (bounded) for them to end, stops the daemons and kills whatever is left
// that carries this cluster's SLURM_CONF (job processes outlive stopped daemons), also when the test failed.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/process/subprocess.hpp"

namespace inferbench::testing {

class SlurmCluster {
public:
    // Whether the programs are installed (a test skips itself, naming the packages, where not).
    static bool available() {
        for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "sinfo"})
            if (!find_program(program) && !std::filesystem::exists(std::string("/usr/sbin/") + program)) return false;
        return true;
    }

    SlurmCluster() {
        char pattern[] = "/tmp/ibsl.XXXXXX";  // short: munge's and Slurm's socket paths must fit 107 bytes
        if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
        chmod(dir_.c_str(), 0755);  // munged refuses a socket folder others cannot enter
        try {
            start();
        } catch (...) {
            stop();
            throw;
        }
    }
    SlurmCluster(const SlurmCluster&) = delete;
    SlurmCluster& operator=(const SlurmCluster&) = delete;
    ~SlurmCluster() { stop(); }

    const std::filesystem::path& dir() const { return dir_; }
    std::filesystem::path conf() const { return dir_ / "slurm.conf"; }
    // "SLURM_CONF=..." for the environment of every Slurm command and of inferbench.
    std::string env() const { return "SLURM_CONF=" + conf().string(); }

    // A Slurm command's output (with SLURM_CONF set), bounded to 30 s.
    CapturedRun command(const std::vector<std::string>& argv) const {
        std::vector<std::string> with_env = {"env", this->env()};
        with_env.insert(with_env.end(), argv.begin(), argv.end());
        return run_captured(with_env, std::nullopt, 30'000);
    }

    // What the daemons logged, for a failing test's message.
    std::string logs() const {
        std::string text;
        for (const char* name : {"slurmctld.log", "slurmd.log", "munged.log"}) {
            std::ifstream in(dir_ / name);
            std::stringstream s;
            s << in.rdbuf();
            const std::string all = s.str();
            text += std::string("--- ") + name + " (last 3000 bytes)\n" +
                    all.substr(all.size() > 3000 ? all.size() - 3000 : 0);
        }
        return text;
    }

private:
    static int free_port() {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        socklen_t size = sizeof address;
        const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                           getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
        close(fd);
        if (!bound) throw std::runtime_error("no free port");
        return ntohs(address.sin_port);
    }

    static std::string short_hostname() {
        char name[256] = {};
        gethostname(name, sizeof name - 1);
        std::string host = name;
        return host.substr(0, host.find('.'));
    }

    void write_config(int controller_port, int node_port) const {
        const std::string d = dir_.string();
        const std::string host = short_hostname();
        std::filesystem::create_directories(dir_ / "state");
        std::filesystem::create_directories(dir_ / "spool");
        for (const char* gpu : {"gpu0", "gpu1"})
            if (!std::filesystem::exists(dir_ / gpu)) std::filesystem::create_symlink("/dev/null", dir_ / gpu);
        std::ofstream(dir_ / "slurm.conf")
            << "ClusterName=inferbench-test\n"
            << "SlurmctldHost=" << host << "(127.0.0.1)\n"
            << "SlurmctldPort=" << controller_port << "\nSlurmdPort=" << node_port << "\n"
            << "SlurmUser=root\nSlurmdUser=root\n"
            << "AuthType=auth/munge\nCredType=cred/munge\n"
            << "AuthInfo=socket=" << d << "/munge/socket,cred_expire=10\n"
            << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
            << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
            << "SlurmctldLogFile=" << d << "/slurmctld.log\nSlurmdLogFile=" << d << "/slurmd.log\n"
            << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
            << "SchedulerType=sched/backfill\nSchedulerParameters=sched_interval=2,bf_interval=2\n"
            << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
            << "GresTypes=gpu\nReturnToService=2\nMinJobAge=600\nKillWait=5\n"
            << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << d
            << "/jobcomp.txt\n"
            // Eight CPUs whatever the machine has (config_overrides), so a 4-task array runs at once on 2 cores.
            << "SlurmdParameters=config_overrides\n"
            << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=8 Gres=gpu:2 State=UNKNOWN\n"
            << "PartitionName=test Nodes=" << host << " Default=YES MaxTime=INFINITE State=UP\n";
        std::ofstream(dir_ / "gres.conf") << "NodeName=" << host << " Name=gpu File=" << d << "/gpu[0-1]\n";
    }

    Child daemon(const std::vector<std::string>& argv, const std::string& log) const {
        const int fd = ::open((dir_ / log).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        SpawnOptions options;
        options.stdout_mode = Output::inherit;
        options.stderr_mode = Output::inherit;
        options.fds = {{1, fd}, {2, fd}};
        options.new_process_group = true;
        options.kill_with_parent = true;
        options.env = {env()};
        Child child = spawn(argv, options);
        ::close(fd);
        return child;
    }

    void start_munge() {
        std::filesystem::create_directories(dir_ / "munge");
        chmod((dir_ / "munge").c_str(), 0755);
        {
            std::ofstream key(dir_ / "munge" / "key", std::ios::binary);
            std::ifstream random("/dev/urandom", std::ios::binary);
            std::vector<char> bytes(1024);
            random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            key.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        chmod((dir_ / "munge" / "key").c_str(), 0600);
        const std::string m = (dir_ / "munge").string();
        daemons_.push_back(
            daemon({"munged", "-F", "--socket=" + m + "/socket", "--key-file=" + m + "/key", "--pid-file=" + m + "/pid",
                    "--seed-file=" + m + "/seed", "--log-file=" + (dir_ / "munged.log").string()},
                   "munged.out"));
        if (!wait_until_true([&] { return std::filesystem::exists(dir_ / "munge" / "socket"); }, 10))
            throw std::runtime_error("munged did not start:\n" + logs());
    }

    // Whether the node is idle within `seconds`.
    bool node_idle(int seconds) const {
        return wait_until_true([&] { return command({"sinfo", "-h", "-o", "%T"}).out.find("idle") == 0; }, seconds);
    }

    void start() {
        start_munge();
        // A port taken between choosing and binding: the controller exits; choose again.
        for (int attempt = 0; attempt < 3; ++attempt) {
            write_config(free_port(), free_port());
            auto controller = daemon({"slurmctld", "-D", "-f", conf().string()}, "slurmctld.out");
            auto node = daemon({"slurmd", "-D", "-f", conf().string()}, "slurmd.out");
            daemons_.push_back(std::move(controller));
            daemons_.push_back(std::move(node));
            if (node_idle(30)) return;
            stop_daemons(1);
        }
        throw std::runtime_error("the Slurm node did not become idle:\n" + logs());
    }

    template <typename Done>
    static bool wait_until_true(Done done, int seconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
        while (std::chrono::steady_clock::now() < deadline) {
            if (done()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return done();
    }

    // Stops the daemons started after munged (all but the first `keep`), last first.
    void stop_daemons(std::size_t keep) {
        while (daemons_.size() > keep) {
            Child& child = daemons_.back();
            child.signal_group(SIGTERM);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (!child.try_wait() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            daemons_.pop_back();  // SIGKILLs its group where it had not ended
        }
    }

    // Processes that carry this cluster's SLURM_CONF in their environment: slurmstepd and the jobs' processes.
    std::vector<pid_t> stray_processes() const {
        std::vector<pid_t> pids;
        const std::string marker = env();
        for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
            const std::string name = entry.path().filename().string();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            const auto pid = static_cast<pid_t>(std::stol(name));
            if (pid == getpid()) continue;
            std::ifstream environ(entry.path() / "environ", std::ios::binary);
            std::string variable;
            while (std::getline(environ, variable, '\0'))
                if (variable == marker) {
                    pids.push_back(pid);
                    break;
                }
        }
        return pids;
    }

    void stop() {
        if (daemons_.size() > 1) {
            command({"scancel", "--full", "--signal=KILL", "--user=root"});
            command({"scancel", "--user=root"});
            wait_until_true([&] { return command({"squeue", "-h"}).out.empty(); }, 15);
        }
        stop_daemons(0);
        for (const pid_t pid : stray_processes()) kill(pid, SIGKILL);
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    std::filesystem::path dir_;
    std::vector<Child> daemons_;  // munged first
};

}  // namespace inferbench::testing
