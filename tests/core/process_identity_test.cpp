// A process is known by pid and start time: a live one is alive, an ended one (its pid free or reused) gone.
#include "core/process/process_identity.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(ProcessIdentity, ThisProcessIsAlive) {
    const ProcessIdentity self = current_process_identity();
    EXPECT_EQ(self.pid, getpid());
    EXPECT_GT(self.start_ticks, 0);
    EXPECT_FALSE(self.boot_id.empty());
    EXPECT_FALSE(self.pid_namespace.empty());
    EXPECT_EQ(process_state(self), ProcessState::alive);
}

TEST(ProcessIdentity, AnEndedProcessIsGoneEvenBeforeItIsReaped) {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    ProcessIdentity identity = current_process_identity();
    identity.pid = child;
    siginfo_t info{};
    waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT);  // a zombie now
    EXPECT_FALSE(process_start_ticks(child).has_value());
    EXPECT_EQ(process_state(identity), ProcessState::gone);
    waitpid(child, nullptr, 0);
    EXPECT_EQ(process_state(identity), ProcessState::gone);
}

TEST(ProcessIdentity, APidTakenByALaterProcessIsGone) {
    ProcessIdentity earlier = current_process_identity();
    earlier.start_ticks -= 1;
    EXPECT_EQ(process_state(earlier), ProcessState::gone);
}

TEST(ProcessIdentity, AnotherHostCannotBeJudged) {
    ProcessIdentity elsewhere = current_process_identity();
    elsewhere.host += "-other";
    EXPECT_EQ(process_state(elsewhere), ProcessState::unknown);
}

}  // namespace
}  // namespace inferbench
