#include "operator/kube/response.hpp"

#include <gtest/gtest.h>

namespace kubeload::kube {
namespace {

TEST(KubeResponse, ParsesStatusOnNotFound) {
  const auto r = make_response(404, R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound",
      "details":{"name":"x","kind":"configmaps"},"code":404})");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.is_not_found());
  EXPECT_FALSE(r.is_conflict());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->reason, "NotFound");
  EXPECT_EQ(r.error->message, "configmaps \"x\" not found");
  EXPECT_EQ(r.error->code, 404);
  EXPECT_EQ(r.error->details["name"], "x");
  EXPECT_EQ(r.describe(), "404 NotFound: configmaps \"x\" not found");
}

TEST(KubeResponse, ConflictIsNotAlreadyExists) {
  const auto conflict = make_response(409, R"({"kind":"Status","status":"Failure",
      "reason":"Conflict","message":"the object has been modified","code":409})");
  EXPECT_TRUE(conflict.is_conflict());
  EXPECT_FALSE(conflict.is_already_exists());
  const auto exists = make_response(409, R"({"kind":"Status","status":"Failure",
      "reason":"AlreadyExists","message":"configmaps \"a\" already exists","code":409})");
  EXPECT_FALSE(exists.is_conflict());
  EXPECT_TRUE(exists.is_already_exists());
}

TEST(KubeResponse, GoneAndInvalid) {
  EXPECT_TRUE(make_response(410, R"({"kind":"Status","reason":"Expired","code":410})").is_gone());
  EXPECT_TRUE(
      make_response(422, R"({"kind":"Status","reason":"Invalid","code":422})").is_invalid());
}

TEST(KubeResponse, SuccessHasNoError) {
  const auto r = make_response(200, R"({"kind":"ConfigMap","metadata":{"name":"a"}})");
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.body["metadata"]["name"], "a");
}

TEST(KubeResponse, NonJsonErrorKeepsCodeAndText) {
  const auto r = make_response(503, "upstream connect error");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, 503);
  EXPECT_EQ(r.error->message, "upstream connect error");
  EXPECT_TRUE(r.body.is_null());
  EXPECT_EQ(r.describe(), "503: upstream connect error");
}

TEST(KubeResponse, ErrorBodyThatIsNotAStatus) {
  const auto r = make_response(500, R"({"oops":true})");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, 500);
  EXPECT_TRUE(r.error->reason.empty());
}

TEST(KubeResponse, ParseStatusRejectsOtherKinds) {
  EXPECT_FALSE(parse_status(nlohmann::json::parse(R"({"kind":"Pod"})")));
  EXPECT_FALSE(parse_status(nlohmann::json::array()));
  const auto s = parse_status(
      nlohmann::json::parse(R"({"kind":"Status","code":"not a number","reason":7,"message":"m"})"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->code, 0);
  EXPECT_EQ(s->reason, "");
  EXPECT_EQ(s->message, "m");
}

}  // namespace
}  // namespace kubeload::kube
