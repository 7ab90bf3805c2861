"""What compare.py and bench.py share: a point set file (`lat,lon` lines) as an Arrow table, and
the Spark session both run their jobs in."""
import os
import sys

import pyarrow as pa
import pyarrow.csv as pcsv


def read_points(path, ids=False):
    """The points as float64 `lat` and `lon` columns, after an int64 `id` (0, 1, ...) if asked."""
    table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(column_names=["lat", "lon"]),
                          convert_options=pcsv.ConvertOptions(column_types={"lat": pa.float64(), "lon": pa.float64()}))
    return table.add_column(0, "id", pa.array(range(table.num_rows), pa.int64())) if ids else table


def spark_session(app, **config):
    """A local[2] session whose executors run this Python (where the wheel is), quiet."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master("local[2]").appName(app).config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "4g"))
    for key, value in config.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
