#include "third_party/smoke/c_smoke.h"

#include <stddef.h>

#include "cjson/cJSON.h"

int64_t kiln_smoke_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

int kiln_smoke_parse_threads(const char* json) {
  cJSON* root = cJSON_Parse(json);
  if (root == NULL) return -1;
  const cJSON* n = cJSON_GetObjectItemCaseSensitive(root, "num_threads");
  int result = cJSON_IsNumber(n) ? n->valueint : -1;
  cJSON_Delete(root);
  return result;
}
