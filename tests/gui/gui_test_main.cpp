// GoogleTest main for the GUI tests: a QCoreApplication so that queued signals (the run
// controller's results) can be delivered by an event loop; a QApplication for the tests of
// widgets (built with KVSIM_GUI_TEST_WIDGETS).
#include <gtest/gtest.h>

#ifdef KVSIM_GUI_TEST_WIDGETS
#include <QApplication>
using TestApplication = QApplication;
#else
#include <QCoreApplication>
using TestApplication = QCoreApplication;
#endif

int main(int argc, char** argv) {
  TestApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
