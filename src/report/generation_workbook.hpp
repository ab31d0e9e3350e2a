// The workbooks of a report's generative benchmarks, written only where the selection has any:
//   generation.xlsx        "Generation": one row per generative cell (generation_rows.hpp's table: every column,
//                          keys with their units; TTFT floor, TPOT floor and decode tokens/s bound where known), charts of
//                          TTFT p50, TPOT p50 and decode tokens/s against batch size (one series per model,
//                          backend, precision, device and lengths, with its bound where known); "Definitions":
//                          what each column means.
//   generation-steps.xlsx  "Generation steps": every step of every whole generation of every generative benchmark
//                          (benchmark, generation, step, ms since the generation's start, the step's ms, the KV
//                          cache in MiB), streamed while the report reads each group; past a sheet's rows it goes
//                          on in "Generation steps (2)", ... as the latency workbooks do.
#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "report/excel_report.hpp"
#include "report/generation_rows.hpp"
#include "report/report_data.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {

// How the report's workbooks write a Table (shared by the serving workbook): a column's number format by its key's
// unit (ms to the microsecond; rates, MiB and percentages to one decimal), a cell as its type says (a Duration in
// ms, a bool as yes/no, an Annotated figure as its number), and a "Definitions" sheet of the columns' hints.
XlsxWorkbook::NumberFormat column_format(std::string_view key);
void write_table_cell(XlsxWorkbook::Sheet& sheet, XlsxWorkbook::Row row, XlsxWorkbook::Col col, const Cell& cell);
void write_definitions(XlsxWorkbook& book, const Table& table);

// false (and nothing written) without rows.
bool write_generation_workbook(std::span<const GenerationRow> rows, const std::filesystem::path& file);

// generation-steps.xlsx, fed one group at a time: the file is begun at the first benchmark with steps.
class GenerationStepsWorkbook {
public:
    GenerationStepsWorkbook(std::filesystem::path file, const ExcelOptions& options);
    GenerationStepsWorkbook(const GenerationStepsWorkbook&) = delete;
    GenerationStepsWorkbook& operator=(const GenerationStepsWorkbook&) = delete;
    ~GenerationStepsWorkbook();

    // The steps of the group's generative benchmarks (ReportBenchmark::steps).
    void add(const ReportGroup& group);
    // Writes the file; false (nothing written) where no benchmark had steps.
    bool close();
    const std::filesystem::path& file() const { return file_; }

private:
    void next_sheet();

    std::filesystem::path file_;
    std::int64_t rows_per_sheet_;
    std::unique_ptr<XlsxWorkbook> book_;
    struct Writing;
    std::unique_ptr<Writing> writing_;
};

// Writes DIR/generation.xlsx and closes `steps`: the files written; a workbook without data is not written and an
// earlier report's file of its name is removed (a selection without generative benchmarks adds nothing).
ReportFiles generation_workbook_files(std::span<const GenerationRow> rows, GenerationStepsWorkbook& steps,
                                      const std::filesystem::path& dir);

}  // namespace inferbench::report
