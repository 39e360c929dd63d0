// GoogleTest main for the view-model tests: a QCoreApplication so that queued signals (the run
// controller's results) can be delivered by an event loop.
#include <gtest/gtest.h>

#include <QCoreApplication>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
