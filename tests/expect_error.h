// EXPECT_ERROR(statement, text): `statement` throws vacc::Error and its message contains
// `text`. EXPECT_THROW alone passes for any error, also the wrong one.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vacc/support/error.h"

#define EXPECT_ERROR(statement, text)                                                              \
  do {                                                                                             \
    std::string vacc_error_message_;                                                               \
    try {                                                                                          \
      statement;                                                                                   \
    } catch (const ::vacc::Error &vacc_error_) {                                                   \
      vacc_error_message_ = vacc_error_.what();                                                    \
    }                                                                                              \
    if (vacc_error_message_.empty()) {                                                             \
      ADD_FAILURE() << "expected a vacc::Error from: " #statement;                                 \
    } else {                                                                                       \
      EXPECT_NE(vacc_error_message_.find(text), std::string::npos)                                 \
          << "expected the message to contain: " << (text) << "\nactual: " << vacc_error_message_; \
    }                                                                                              \
  } while (0)
