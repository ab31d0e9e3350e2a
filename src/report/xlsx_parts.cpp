#include "report/xlsx_parts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/text_checks.hpp"
#include "report/table.hpp"

namespace inferbench::report::xlsx {
namespace {

constexpr std::string_view kMain = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
constexpr std::string_view kOfficeRelationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
constexpr std::string_view kPackageRelationships = "http://schemas.openxmlformats.org/package/2006/relationships";
constexpr std::string_view kChartNs = "http://schemas.openxmlformats.org/drawingml/2006/chart";
constexpr std::string_view kDrawingNs = "http://schemas.openxmlformats.org/drawingml/2006/main";
constexpr std::string_view kSpreadsheetDrawingNs = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing";
constexpr std::string_view kTypes = "application/vnd.openxmlformats-officedocument.";

constexpr double kEmuPerPixel = 9525;
constexpr double kChartWidthPx = 480 * 1.5, kChartHeightPx = 288 * 1.2;
constexpr double kDefaultColumnPx = 64, kDefaultRowPx = 20;  // 8.43 characters; 15 points

// A column `width` characters wide in pixels of the default font (7-pixel digits, 5 pixels of padding).
double column_pixels(double width) { return width < 1 ? std::floor(width * 12 + 0.5) : std::floor(width * 7 + 0.5) + 5; }

// Each series' line colour: the HTML report's palette (html/page.js) without its grey, which reads as
// an axis. Without a colour of its own a series draws no line in LibreOffice (no theme part to take one from).
constexpr std::string_view kPalette[] = {"1F77B4", "D62728", "2CA02C", "FF7F0E", "9467BD",
                                         "8C564B", "E377C2", "17BECF", "BCBD22"};

// Custom number formats (numFmtId 164 on; 1 is Excel's built-in "0"), in NumberFormat's order after integer.
constexpr std::string_view kDecimalFormats[] = {"0.0", "0.000", "0.000000", "[<1]0.000000;0.000"};

bool needs_escape(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return c == '&' || c == '<' || c == '>' || c == '"' || byte < 0x20 || byte >= 0x80;
}

void append_escaped_utf8(std::string& out, std::string_view text, bool attribute) {
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '&') {
            out += "&amp;";
        } else if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else if (c == '"' && attribute) {
            out += "&quot;";
        } else if (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            out += fmt::format("_x{:04X}_", byte);  // not allowed in XML 1.0: Excel's escape
        } else {
            out.push_back(c);
        }
    }
}

std::string number_text(double value) {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    return {buffer, end};
}

// A cell range of one column as a chart refers to it: 'sheet'!$B$2:$B$9.
std::string range(const std::string& sheet, XlsxWorkbook::Col col, XlsxWorkbook::Row first, XlsxWorkbook::Row last) {
    std::string quoted;
    for (const char c : sheet) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    const std::string column = column_name(col);
    return fmt::format("'{}'!${}${}:${}${}", quoted, column, first + 1, column, last + 1);
}

std::string rich_text(std::string_view text, bool rotated) {
    std::string out = "<c:title><c:tx><c:rich>";
    out += rotated ? "<a:bodyPr rot=\"-5400000\" vert=\"horz\"/>" : "<a:bodyPr/>";
    out += "<a:lstStyle/><a:p><a:pPr><a:defRPr/></a:pPr><a:r><a:rPr lang=\"en-US\"/><a:t>";
    append_escaped(out, text);
    out += "</a:t></a:r></a:p></c:rich></c:tx><c:layout/></c:title>";
    return out;
}

// A reference to one column of a sheet, with the values it held when written where known.
std::string number_reference(const std::string& formula, const std::vector<double>& cache) {
    std::string out = "<c:numRef><c:f>";
    append_escaped(out, formula);
    out += "</c:f>";
    if (!cache.empty()) {
        out += fmt::format("<c:numCache><c:formatCode>General</c:formatCode><c:ptCount val=\"{}\"/>", cache.size());
        for (std::size_t i = 0; i < cache.size(); ++i)
            if (std::isfinite(cache[i])) out += fmt::format("<c:pt idx=\"{}\"><c:v>{}</c:v></c:pt>", i, number_text(cache[i]));
        out += "</c:numCache>";
    }
    return out + "</c:numRef>";
}

// A series' line (and markers) drawn in its own colour: a viewer need not pick one.
std::string series_style(bool markers, std::string_view colour) {
    const std::string fill = fmt::format("<a:solidFill><a:srgbClr val=\"{}\"/></a:solidFill>", colour);
    std::string out = fmt::format("<c:spPr><a:ln w=\"19050\" cap=\"rnd\">{}<a:round/></a:ln></c:spPr>", fill);
    if (markers)
        out += fmt::format(
            "<c:marker><c:symbol val=\"circle\"/><c:size val=\"6\"/><c:spPr>{0}<a:ln w=\"9525\">{0}</a:ln></c:spPr>"
            "</c:marker>",
            fill);
    else
        out += "<c:marker><c:symbol val=\"none\"/></c:marker>";
    return out;
}

std::string series(const XlsxWorkbook::Chart& chart, std::size_t index, const SeriesValues& values) {
    const auto& s = chart.series[index];
    std::string out = fmt::format("<c:ser><c:idx val=\"{0}\"/><c:order val=\"{0}\"/><c:tx><c:v>", index);
    append_escaped(out, s.name);
    out += "</c:v></c:tx>";
    out += series_style(chart.markers, kPalette[index % std::size(kPalette)]);
    out += "<c:xVal>" + number_reference(range(s.sheet, s.x_col, s.first_row, s.last_row), values.x) + "</c:xVal>";
    out += "<c:yVal>" + number_reference(range(s.sheet, s.y_col, s.first_row, s.last_row), values.y) + "</c:yVal>";
    return out + "<c:smooth val=\"0\"/></c:ser>";
}

std::string value_axis(bool x, const std::string& title, bool log2) {
    std::string out = fmt::format("<c:valAx><c:axId val=\"{}\"/><c:scaling>", x ? 50010001 : 50010002);
    if (log2) out += "<c:logBase val=\"2\"/>";
    out += fmt::format("<c:orientation val=\"minMax\"/></c:scaling><c:axPos val=\"{}\"/>", x ? "b" : "l");
    if (!x) out += "<c:majorGridlines/>";
    out += rich_text(title, !x);
    out += fmt::format(
        "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"{}\"/>"
        "<c:crosses val=\"autoZero\"/><c:crossBetween val=\"midCat\"/></c:valAx>",
        x ? 50010002 : 50010001);
    return out;
}

// Where a span of `pixels` from the start of `first` ends: the cell and the offset in it, in EMU.
std::pair<std::size_t, long> span_end(std::size_t first, double pixels, auto size_of) {
    std::size_t at = first;
    while (pixels >= size_of(at)) pixels -= size_of(at++);
    return {at, std::lround(pixels * kEmuPerPixel)};
}

}  // namespace

void append_escaped(std::string& out, std::string_view text, bool attribute) {
    bool plain = true;
    for (const char c : text) plain = plain && !needs_escape(c);
    if (plain) {
        out += text;
        return;
    }
    if (invalid_utf8_offset(text)) {
        append_escaped_utf8(out, escape_invalid_utf8(text), attribute);
    } else {
        append_escaped_utf8(out, text, attribute);
    }
}

std::string column_name(XlsxWorkbook::Col col) {
    std::string name;
    for (unsigned n = col + 1u; n > 0; n = (n - 1) / 26) name.insert(name.begin(), static_cast<char>('A' + (n - 1) % 26));
    return name;
}

std::string cell_ref(XlsxWorkbook::Row row, XlsxWorkbook::Col col) { return column_name(col) + std::to_string(row + 1); }

double stored_width(double width) { return std::floor(column_pixels(width) / 7 * 256) / 256; }

double title_width(std::string_view title, double min_width) {
    constexpr double kBold = 1.15;  // bold characters are wider than the default font's digits
    return std::max(min_width, std::ceil(static_cast<double>(display_width(title)) * kBold) + 2);
}

unsigned style_of(XlsxWorkbook::NumberFormat format) {
    // cellXfs: 0 the default, 1 bold titles, then one per format after general.
    return format == XlsxWorkbook::NumberFormat::general ? 0u : 1u + static_cast<unsigned>(format);
}

std::string content_types(const std::vector<SheetPart>& sheets, std::size_t drawings, std::size_t charts) {
    std::string out(kXmlDeclaration);
    out += "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
           "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
           "<Default Extension=\"xml\" ContentType=\"application/xml\"/>";
    const auto override_part = [&](const std::string& part, std::string_view type) {
        out += fmt::format("<Override PartName=\"{}\" ContentType=\"{}{}\"/>", part, kTypes, type);
    };
    override_part("/xl/workbook.xml", "spreadsheetml.sheet.main+xml");
    override_part("/xl/styles.xml", "spreadsheetml.styles+xml");
    for (std::size_t i = 1; i <= sheets.size(); ++i)
        override_part(fmt::format("/xl/worksheets/sheet{}.xml", i), "spreadsheetml.worksheet+xml");
    for (std::size_t i = 1; i <= drawings; ++i) override_part(fmt::format("/xl/drawings/drawing{}.xml", i), "drawing+xml");
    for (std::size_t i = 1; i <= charts; ++i) override_part(fmt::format("/xl/charts/chart{}.xml", i), "drawingml.chart+xml");
    return out + "</Types>";
}

std::string package_relationships() {
    return fmt::format(
        "{}<Relationships xmlns=\"{}\"><Relationship Id=\"rId1\" Type=\"{}/officeDocument\" "
        "Target=\"xl/workbook.xml\"/></Relationships>",
        kXmlDeclaration, kPackageRelationships, kOfficeRelationships);
}

std::string workbook(const std::vector<SheetPart>& sheets) {
    std::string out = fmt::format(
        "{}<workbook xmlns=\"{}\" xmlns:r=\"{}\"><bookViews><workbookView xWindow=\"240\" yWindow=\"15\" "
        "windowWidth=\"16095\" windowHeight=\"9660\"/></bookViews><sheets>",
        kXmlDeclaration, kMain, kOfficeRelationships);
    for (std::size_t i = 0; i < sheets.size(); ++i) {
        out += "<sheet name=\"";
        append_escaped(out, sheets[i].name, true);
        out += fmt::format("\" sheetId=\"{0}\" r:id=\"rId{0}\"/>", i + 1);
    }
    return out + "</sheets></workbook>";
}

std::string workbook_relationships(std::size_t sheets) {
    std::string out = fmt::format("{}<Relationships xmlns=\"{}\">", kXmlDeclaration, kPackageRelationships);
    for (std::size_t i = 1; i <= sheets; ++i)
        out += fmt::format("<Relationship Id=\"rId{0}\" Type=\"{1}/worksheet\" Target=\"worksheets/sheet{0}.xml\"/>", i,
                           kOfficeRelationships);
    out += fmt::format("<Relationship Id=\"rId{}\" Type=\"{}/styles\" Target=\"styles.xml\"/>", sheets + 1,
                       kOfficeRelationships);
    return out + "</Relationships>";
}

std::string styles() {
    // Style 0: the default; style 1: bold (the header row); then style_of()'s number formats.
    std::string formats = fmt::format("<numFmts count=\"{}\">", std::size(kDecimalFormats));
    const auto number_style = [](std::size_t id) {
        return fmt::format(
            "<xf numFmtId=\"{}\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>", id);
    };
    std::string number_styles = number_style(1);
    for (std::size_t i = 0; i < std::size(kDecimalFormats); ++i) {
        formats += fmt::format("<numFmt numFmtId=\"{}\" formatCode=\"", 164 + i);
        append_escaped(formats, kDecimalFormats[i], true);
        formats += "\"/>";
        number_styles += number_style(164 + i);
    }
    formats += "</numFmts>";
    return fmt::format(
        "{}<styleSheet xmlns=\"{}\">{}<fonts count=\"2\"><font><sz val=\"11\"/><name val=\"Calibri\"/>"
        "<family val=\"2\"/></font><font><b/><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
        "<fills count=\"2\">"
        "<fill><patternFill patternType=\"none\"/></fill><fill><patternFill patternType=\"gray125\"/></fill></fills>"
        "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
        "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
        "<cellXfs count=\"{}\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
        "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyFont=\"1\"/>{}</cellXfs>"
        "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles></styleSheet>",
        kXmlDeclaration, kMain, formats, 3 + std::size(kDecimalFormats), number_styles);
}

std::string sheet_relationships(std::size_t drawing) {
    return fmt::format(
        "{}<Relationships xmlns=\"{}\"><Relationship Id=\"rId1\" Type=\"{}/drawing\" "
        "Target=\"../drawings/drawing{}.xml\"/></Relationships>",
        kXmlDeclaration, kPackageRelationships, kOfficeRelationships, drawing);
}

std::string drawing(const std::vector<ChartAnchor>& anchors, const std::vector<double>& widths) {
    const auto column_px = [&](std::size_t col) {
        return col < widths.size() ? column_pixels(widths[col]) : kDefaultColumnPx;
    };
    const auto row_px = [](std::size_t) { return kDefaultRowPx; };
    std::string out = fmt::format("{}<xdr:wsDr xmlns:xdr=\"{}\" xmlns:a=\"{}\">", kXmlDeclaration,
                                  kSpreadsheetDrawingNs, kDrawingNs);
    for (std::size_t i = 0; i < anchors.size(); ++i) {
        const auto& anchor = anchors[i];
        const auto [to_col, col_offset] = span_end(anchor.col, kChartWidthPx, column_px);
        const auto [to_row, row_offset] = span_end(anchor.row, kChartHeightPx, row_px);
        out += fmt::format(
            "<xdr:twoCellAnchor><xdr:from><xdr:col>{}</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>{}</xdr:row>"
            "<xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>{}</xdr:col><xdr:colOff>{}</xdr:colOff>"
            "<xdr:row>{}</xdr:row><xdr:rowOff>{}</xdr:rowOff></xdr:to>",
            anchor.col, anchor.row, to_col, col_offset, to_row, row_offset);
        out += fmt::format(
            "<xdr:graphicFrame macro=\"\"><xdr:nvGraphicFramePr><xdr:cNvPr id=\"{}\" name=\"Chart {}\"/>"
            "<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"0\" cy=\"0\"/>"
            "</xdr:xfrm><a:graphic><a:graphicData uri=\"{}\"><c:chart xmlns:c=\"{}\" xmlns:r=\"{}\" r:id=\"rId{}\"/>"
            "</a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor>",
            i + 2, i + 1, kChartNs, kChartNs, kOfficeRelationships, i + 1);
    }
    return out + "</xdr:wsDr>";
}

std::string drawing_relationships(const std::vector<ChartAnchor>& anchors) {
    std::string out = fmt::format("{}<Relationships xmlns=\"{}\">", kXmlDeclaration, kPackageRelationships);
    for (std::size_t i = 0; i < anchors.size(); ++i)
        out += fmt::format("<Relationship Id=\"rId{}\" Type=\"{}/chart\" Target=\"../charts/chart{}.xml\"/>", i + 1,
                           kOfficeRelationships, anchors[i].chart);
    return out + "</Relationships>";
}

std::string chart(const XlsxWorkbook::Chart& chart, const std::vector<SeriesValues>& values) {
    std::string out = fmt::format("{}<c:chartSpace xmlns:c=\"{}\" xmlns:a=\"{}\" xmlns:r=\"{}\"><c:lang val=\"en-US\"/>",
                                  kXmlDeclaration, kChartNs, kDrawingNs, kOfficeRelationships);
    out += "<c:chart>" + rich_text(chart.title, false);
    out += "<c:plotArea><c:layout/><c:scatterChart><c:scatterStyle val=\"lineMarker\"/>";
    for (std::size_t i = 0; i < chart.series.size(); ++i)
        out += series(chart, i, i < values.size() ? values[i] : SeriesValues{});
    out += "<c:axId val=\"50010001\"/><c:axId val=\"50010002\"/></c:scatterChart>";
    out += value_axis(true, chart.x_title, chart.log2_x) + value_axis(false, chart.y_title, false);
    // An empty cell is a bucket or a batch size without a value: the line joins the values either side
    // (a line that stops at every empty bucket of a sparse series draws nothing but dots).
    out += "</c:plotArea><c:legend><c:legendPos val=\"b\"/><c:layout/></c:legend><c:plotVisOnly val=\"1\"/>"
           "<c:dispBlanksAs val=\"span\"/></c:chart>";
    out += "<c:printSettings><c:headerFooter/><c:pageMargins b=\"0.75\" l=\"0.7\" r=\"0.7\" t=\"0.75\" header=\"0.3\" "
           "footer=\"0.3\"/><c:pageSetup/></c:printSettings></c:chartSpace>";
    return out;
}

}  // namespace inferbench::report::xlsx
