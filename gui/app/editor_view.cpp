#include "gui/app/editor_view.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTextBlock>
#include <QTimer>
#include <QVBoxLayout>

#include "gui/models/diagnostics_model.hpp"
#include "gui/models/knob_model.hpp"
#include "gui/models/scenario_document.hpp"

namespace kvsim::gui {
namespace {

// Keeps the common knobs (unless all keys are asked for) whose key contains the filter text.
class KnobFilter : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void set(const QString& text, bool all) {
    text_ = text;
    all_ = all;
    invalidateFilter();
  }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
    const QModelIndex i = sourceModel()->index(row, KnobModel::kKey, parent);
    if (!all_ && !i.data(KnobModel::kCommonRole).toBool()) return false;
    return text_.isEmpty() || i.data().toString().contains(text_, Qt::CaseInsensitive);
  }

 private:
  QString text_;
  bool all_ = false;
};

// A combo box for keys with a fixed set of names (enums, booleans); a line edit otherwise.
class KnobDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                        const QModelIndex& index) const override {
    const QStringList choices = index.data(KnobModel::kChoicesRole).toStringList();
    if (choices.isEmpty()) return QStyledItemDelegate::createEditor(parent, option, index);
    auto* box = new QComboBox(parent);
    box->addItems(choices);
    return box;
  }
  void setEditorData(QWidget* editor, const QModelIndex& index) const override {
    if (auto* box = qobject_cast<QComboBox*>(editor)) {
      box->setCurrentText(index.data(Qt::EditRole).toString());
      return;
    }
    QStyledItemDelegate::setEditorData(editor, index);
  }
  void setModelData(QWidget* editor, QAbstractItemModel* model,
                    const QModelIndex& index) const override {
    if (auto* box = qobject_cast<QComboBox*>(editor)) {
      model->setData(index, box->currentText());
      return;
    }
    QStyledItemDelegate::setModelData(editor, model, index);
  }
};

}  // namespace

EditorView::EditorView(ScenarioDocument* doc, QWidget* parent)
    : QWidget(parent),
      doc_(doc),
      knobs_(new KnobModel(doc, this)),
      proxy_(new KnobFilter(this)),
      diags_(new DiagnosticsModel(this)),
      table_(new QTableView(this)),
      text_(new QPlainTextEdit(this)),
      diag_view_(new QTableView(this)),
      status_(new QLabel(this)),
      filter_(new QLineEdit(this)),
      all_keys_(new QCheckBox(QStringLiteral("All keys"), this)),
      debounce_(new QTimer(this)) {
  proxy_->setSourceModel(knobs_);
  table_->setObjectName(QStringLiteral("knob_table"));
  table_->setModel(proxy_);
  table_->setItemDelegate(new KnobDelegate(table_));
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(KnobModel::kKey, 300);
  table_->setColumnWidth(KnobModel::kValue, 120);
  table_->setColumnWidth(KnobModel::kKind, 130);
  table_->setTextElideMode(Qt::ElideRight);
  table_->setWordWrap(false);

  filter_->setPlaceholderText(QStringLiteral("Filter keys (e.g. clients, tiers, max_num)"));
  filter_->setClearButtonEnabled(true);
  all_keys_->setToolTip(
      QStringLiteral("Show every scalar key, not only the ones planners change most"));
  connect(filter_, &QLineEdit::textChanged, this, &EditorView::apply_filter);
  connect(all_keys_, &QCheckBox::toggled, this, &EditorView::apply_filter);
  apply_filter();

  auto* form = new QWidget(this);
  auto* fl = new QVBoxLayout(form);
  fl->setContentsMargins(0, 0, 0, 0);
  auto* form_title =
      new QLabel(QStringLiteral("<b>Knobs</b> &mdash; double-click a value to change it"), form);
  auto* bar = new QHBoxLayout();
  bar->addWidget(filter_, 1);
  bar->addWidget(all_keys_);
  fl->addWidget(form_title);
  fl->addLayout(bar);
  fl->addWidget(table_, 1);

  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(9.5);
  text_->setObjectName(QStringLiteral("yaml_text"));
  text_->setFont(mono);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setTabChangesFocus(false);
  diag_view_->setObjectName(QStringLiteral("diagnostics"));
  diag_view_->setModel(diags_);
  diag_view_->verticalHeader()->hide();
  diag_view_->horizontalHeader()->setStretchLastSection(true);
  diag_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  diag_view_->setMaximumHeight(130);
  diag_view_->setColumnWidth(DiagnosticsModel::kLine, 45);
  diag_view_->setColumnWidth(DiagnosticsModel::kColumn, 40);
  diag_view_->setColumnWidth(DiagnosticsModel::kPath, 200);
  connect(diag_view_, &QTableView::clicked, this,
          [this](const QModelIndex& i) { jump_to_diagnostic(i.row()); });
  status_->setObjectName(QStringLiteral("editor_status"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* right = new QWidget(this);
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->addWidget(new QLabel(
      QStringLiteral("<b>Scenario YAML</b> &mdash; comments are kept when knobs change"), right));
  rl->addWidget(status_);
  rl->addWidget(text_, 1);
  rl->addWidget(diag_view_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(form);
  split->addWidget(right);
  split->setStretchFactor(0, 5);
  split->setStretchFactor(1, 4);
  split->setSizes({760, 640});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(split);

  debounce_->setSingleShot(true);
  debounce_->setInterval(400);
  connect(debounce_, &QTimer::timeout, this, [this] { doc_->set_text(text_->toPlainText()); });
  connect(text_, &QPlainTextEdit::textChanged, this, [this] {
    if (!loading_) debounce_->start();
  });
  connect(doc_, &ScenarioDocument::textReplaced, this, &EditorView::reload_text);
  connect(doc_, &ScenarioDocument::scenarioChanged, this, &EditorView::show_diagnostics);
  connect(knobs_, &KnobModel::editRejected, this, [this](const QString& message) {
    status_->setText(QStringLiteral("<span style='color:#b00020'>Rejected: %1</span>")
                         .arg(message.toHtmlEscaped()));
  });
  connect(knobs_, &QAbstractItemModel::modelReset, this, &EditorView::apply_filter);
  reload_text();
}

void EditorView::apply_filter() {
  static_cast<KnobFilter*>(proxy_)->set(filter_->text(), all_keys_->isChecked());
}

void EditorView::reload_text() {
  loading_ = true;
  const int scroll =
      text_->verticalScrollBar() != nullptr ? text_->verticalScrollBar()->value() : 0;
  text_->setPlainText(doc_->text());
  text_->verticalScrollBar()->setValue(scroll);
  loading_ = false;
  show_diagnostics();
  if (!doc_->last_edit_in_place()) {
    status_->setText(
        QStringLiteral("<span style='color:#a05a00'>That edit could not be made in place: the text "
                       "was rewritten from the decoded scenario (comments dropped).</span>"));
  }
}

void EditorView::show_diagnostics() {
  diags_->set_diagnostics(doc_->diagnostics());
  QList<QTextEdit::ExtraSelection> marks;
  for (const Diagnostic& d : doc_->diagnostics()) {
    if (d.line <= 0) continue;
    const QTextBlock block = text_->document()->findBlockByNumber(d.line - 1);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection line;
    line.format.setBackground(QColor(255, 235, 235));
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = QTextCursor(block);
    marks << line;
    QTextEdit::ExtraSelection word;
    word.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
    word.format.setUnderlineColor(QColor(200, 0, 0));
    word.format.setToolTip(QString::fromStdString(d.message));
    word.cursor = QTextCursor(block);
    word.cursor.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor,
                             std::max(0, d.column - 1));
    word.cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    marks << word;
  }
  text_->setExtraSelections(marks);
  if (doc_->diagnostics().empty()) {
    status_->setText(QStringLiteral("<span style='color:#1b7f3b'>Valid scenario: %1</span>")
                         .arg(doc_->scenario()
                                  ? QString::fromStdString(doc_->scenario()->name).toHtmlEscaped()
                                  : QString()));
  } else {
    const Diagnostic& d = doc_->diagnostics().front();
    status_->setText(
        QStringLiteral("<span style='color:#b00020'>%1 problem(s). Line %2: %3</span>")
            .arg(doc_->diagnostics().size())
            .arg(d.line)
            .arg(QString::fromStdString((d.path.empty() ? "" : d.path + ": ") + d.message)
                     .toHtmlEscaped()));
  }
  diag_view_->setVisible(!doc_->diagnostics().empty());
}

void EditorView::jump_to_diagnostic(int row) {
  if (row < 0 || row >= static_cast<int>(diags_->diagnostics().size())) return;
  const Diagnostic& d = diags_->diagnostics()[static_cast<std::size_t>(row)];
  if (d.line <= 0) return;
  QTextCursor c(text_->document()->findBlockByNumber(d.line - 1));
  c.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, std::max(0, d.column - 1));
  text_->setTextCursor(c);
  text_->centerCursor();
  text_->horizontalScrollBar()->setValue(0);
  text_->setFocus();
}

}  // namespace kvsim::gui
