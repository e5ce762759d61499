/* File: runtime_c/status_test.c — kiln/status.h. main returns 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/status.h"
#include "runtime_c/c_test_util.h"

int main(void) {
  /* NULL is OK. */
  CHECK(kiln_status_create(KILN_OK, "ignored %d", 1) == NULL);
  CHECK(kiln_status_code(NULL) == KILN_OK);
  CHECK(strcmp(kiln_status_message(NULL), "") == 0);
  kiln_status_free(NULL);

  /* Code and formatted message. */
  KilnStatus* st = kiln_status_create(KILN_DATA_LOSS, "%s: offset %d + size %llu", "model.so",
                                      4096, 900ULL);
  CHECK(st != NULL);
  CHECK(kiln_status_code(st) == KILN_DATA_LOSS);
  CHECK(strcmp(kiln_status_message(st), "model.so: offset 4096 + size 900") == 0);
  kiln_status_free(st);

  /* Empty and NULL formats. */
  st = kiln_status_create(KILN_INTERNAL, "%s", "");
  CHECK(st != NULL && strcmp(kiln_status_message(st), "") == 0);
  kiln_status_free(st);
  st = kiln_status_create(KILN_INTERNAL, NULL);
  CHECK(st != NULL && kiln_status_code(st) == KILN_INTERNAL);
  CHECK(st != NULL && strcmp(kiln_status_message(st), "") == 0);
  kiln_status_free(st);

  /* Code names. */
  CHECK(strcmp(kiln_status_code_name(KILN_OK), "OK") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_INVALID_ARGUMENT), "INVALID_ARGUMENT") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_NOT_FOUND), "NOT_FOUND") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_FAILED_PRECONDITION), "FAILED_PRECONDITION") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_OUT_OF_RANGE), "OUT_OF_RANGE") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_UNIMPLEMENTED), "UNIMPLEMENTED") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_INTERNAL), "INTERNAL") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_DATA_LOSS), "DATA_LOSS") == 0);
  CHECK(strcmp(kiln_status_code_name((KilnStatusCode)77), "UNKNOWN") == 0);

  /* Truncation to 4095 bytes. */
  char* big = (char*)malloc(10001);
  CHECK(big != NULL);
  if (big != NULL) {
    memset(big, 'x', 10000);
    big[10000] = 0;
    st = kiln_status_create(KILN_INTERNAL, "%s", big);
    CHECK(st != NULL && strlen(kiln_status_message(st)) == 4095);
    kiln_status_free(st);
    /* A two-byte UTF-8 character straddling the cut is dropped whole. */
    memset(big, 'a', 4094);
    big[4094] = (char)0xc3; /* U+00E9 */
    big[4095] = (char)0xa9;
    big[4096] = 0;
    st = kiln_status_create(KILN_INTERNAL, "%s", big);
    CHECK(st != NULL && strlen(kiln_status_message(st)) == 4094);
    kiln_status_free(st);
    /* Exactly 4095 bytes: kept whole. */
    memset(big, 'b', 4095);
    big[4095] = 0;
    st = kiln_status_create(KILN_INTERNAL, "%s", big);
    CHECK(st != NULL && strlen(kiln_status_message(st)) == 4095);
    kiln_status_free(st);
    /* A three-byte character ending exactly at the limit is kept. */
    memset(big, 'c', 4092);
    big[4092] = (char)0xe2; /* U+20AC */
    big[4093] = (char)0x82;
    big[4094] = (char)0xac;
    big[4095] = 'd';
    big[4096] = 'e';
    big[4097] = 0;
    st = kiln_status_create(KILN_INTERNAL, "%s", big);
    CHECK(st != NULL && strlen(kiln_status_message(st)) == 4095);
    kiln_status_free(st);
    /* A three-byte character split after its second byte is dropped. */
    memset(big, 'c', 4093);
    big[4093] = (char)0xe2;
    big[4094] = (char)0x82;
    big[4095] = (char)0xac;
    big[4096] = 0;
    st = kiln_status_create(KILN_INTERNAL, "%s", big);
    CHECK(st != NULL && strlen(kiln_status_message(st)) == 4093);
    kiln_status_free(st);
    free(big);
  }

  if (failures != 0) {
    fprintf(stderr, "status_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("status_test: OK\n");
  return 0;
}
