#include "serving/endpoint_probe.hpp"

#include <gtest/gtest.h>

#include "common/local_http_server.hpp"

namespace inferbench::serving {
namespace {

using testing::HttpConnection;
using testing::HttpRequest;
using testing::LocalHttpServer;

TEST(EndpointProbe, ListsTheModelsAndTheServer) {
    LocalHttpServer server([](const HttpRequest& request, const HttpConnection& c) {
        const std::string body =
            request.path == "/v1/models"
                ? R"({"object":"list","data":[{"id":"tiny-llama","object":"model"},{"id":"other","object":"model"}]})"
                : "{}";
        c.send("HTTP/1.1 200 OK\r\nServer: llama.cpp\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
        return true;
    });
    const EndpointProbe probe = probe_endpoint({.base_url = server.url() + "/v1/"});
    EXPECT_TRUE(probe.reachable) << probe.error;
    EXPECT_EQ(probe.http_status, 200);
    EXPECT_EQ(probe.models, (std::vector<std::string>{"tiny-llama", "other"}));
    EXPECT_EQ(probe.server, "llama.cpp");
    EXPECT_TRUE(probe.error.empty());
}

TEST(EndpointProbe, UnreachableUrlSaysHowToFixIt) {
    const std::string url = "http://127.0.0.1:" + std::to_string(testing::closed_port());
    const EndpointProbe probe = probe_endpoint({.base_url = url});
    EXPECT_FALSE(probe.reachable);
    EXPECT_EQ(probe.error,
              "cannot connect to " + url + "/v1/models: Connection refused; start the server or set endpoint=URL");
}

TEST(EndpointProbe, AnotherApiIsNamed) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) {
        c.send(
            "HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 22\r\n\r\n"
            "<html>not found</html>");
        return true;
    });
    const EndpointProbe probe = probe_endpoint({.base_url = server.url()});
    EXPECT_FALSE(probe.reachable);
    EXPECT_EQ(probe.http_status, 404);
    EXPECT_EQ(probe.server, "nginx");
    EXPECT_EQ(probe.error, server.url() +
                               "/v1/models answered HTTP 404 from nginx but not the OpenAI API's model list "
                               "(<html>not found</html>); is endpoint=URL an OpenAI-compatible server?");
}

TEST(EndpointProbe, ASilentServerIsBoundedByTheTimeout) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) {
        c.wait_for_stop(std::chrono::seconds(10));
        return false;
    });
    const EndpointProbe probe = probe_endpoint({.base_url = server.url()}, 500'000'000);
    EXPECT_FALSE(probe.reachable);
    EXPECT_EQ(probe.error.rfind("cannot connect to " + server.url() + "/v1/models: ", 0), 0u) << probe.error;
}

}  // namespace
}  // namespace inferbench::serving
