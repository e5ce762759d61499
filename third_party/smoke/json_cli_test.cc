// Smoke test for the small header/C libraries: cJSON, DLPack, nlohmann/json, CLI11.
#include <cstdlib>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cjson/cJSON.h"
#include "dlpack/dlpack.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

TEST(CjsonSmoke, ParseAndPrint) {
  cJSON* root = cJSON_Parse(R"({"nodes": [1, 2, 3], "name": "g"})");
  ASSERT_NE(root, nullptr);
  const cJSON* nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
  ASSERT_TRUE(cJSON_IsArray(nodes));
  EXPECT_EQ(cJSON_GetArraySize(nodes), 3);
  char* text = cJSON_PrintUnformatted(root);
  EXPECT_EQ(std::string(text), R"({"nodes":[1,2,3],"name":"g"})");
  cJSON_free(text);
  cJSON_Delete(root);
}

TEST(DlpackSmoke, Tensor) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  EXPECT_EQ(t.shape[1], 3);
  EXPECT_GE(DLPACK_VERSION, 60);
}

TEST(NlohmannSmoke, RoundTrip) {
  nlohmann::json j = {{"workload", "resnet50"}, {"runtime_ms_mean", 28.5}};
  nlohmann::json back = nlohmann::json::parse(j.dump());
  EXPECT_EQ(back["workload"], "resnet50");
  EXPECT_DOUBLE_EQ(back["runtime_ms_mean"].get<double>(), 28.5);
}

TEST(Cli11Smoke, Parse) {
  CLI::App app{"kiln"};
  int opt_level = 2;
  std::string input;
  app.add_option("--opt-level,-O", opt_level);
  app.add_option("input", input)->required();
  std::vector<std::string> argv_s = {"kiln", "-O", "3", "model.onnx"};
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  ASSERT_NO_THROW(app.parse(static_cast<int>(argv.size()), argv.data()));
  EXPECT_EQ(opt_level, 3);
  EXPECT_EQ(input, "model.onnx");
}

}  // namespace
